// The designed reasoning fixtures (models/exports/thinking.ts) on transformers.js, the reference:
// greedy decoding of any conversation that ends in the template's generation prompt gives
// exactly the designed tokens (a think block, the answer, EOS), which are what Qwen3's real
// tokenizer makes of the designed text. The Qwen3 one opens the block itself; the 2507-style
// one's prompt opens it; Qwen3's enable_thinking=false closes it in the prompt.
import { AutoModelForCausalLM, Tensor } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { THINKING_REPLY } from '../../models/exports/thinking.js';
import type { ChatMessage } from '../../src/engine/protocol.js';
import { exportFixtures, referencePromptIds, referenceTokenizer } from '../helpers/exports.js';

const EOS = 151645;
const CONVERSATIONS: ChatMessage[][] = [
  [{ role: 'user', content: 'Hello there' }],
  [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Name three rivers of Europe.' }],
  [
    { role: 'user', content: 'What is 2 + 2?' },
    { role: 'assistant', content: '4' },
    { role: 'user', content: 'And times 3?' },
  ],
];

async function greedy(name: string, kwargs: Record<string, unknown> = {}): Promise<{ prompt: string; reply: number[] }[]> {
  const model = await AutoModelForCausalLM.from_pretrained(name, { dtype: 'fp32', device: 'cpu', local_files_only: true });
  const tok = await referenceTokenizer(name);
  try {
    const out = [];
    for (const messages of CONVERSATIONS) {
      const ids = await referencePromptIds(name, messages, kwargs);
      const input_ids = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
      const attention_mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
      const seq = (await model.generate({ input_ids, attention_mask, max_new_tokens: 40, do_sample: false } as never)) as { data: BigInt64Array };
      out.push({ prompt: tok.decode(ids), reply: Array.from(seq.data.slice(ids.length), Number) });
    }
    return out;
  } finally {
    await model.dispose();
  }
}

async function encode(name: string, text: string): Promise<number[]> {
  return (await referenceTokenizer(name)).encode(text, { add_special_tokens: false });
}

describe('the designed reasoning fixtures on transformers.js', () => {
  it('qwen3-think-export: every prompt gets <think>, the designed thinking, </think>, the answer, EOS', async () => {
    await exportFixtures();
    const expected = [...(await encode('qwen3-think-export', `<think>${THINKING_REPLY.thinking}</think>\n\n${THINKING_REPLY.answer}`)), EOS];
    for (const { prompt, reply } of await greedy('qwen3-think-export')) {
      expect(prompt.endsWith('<|im_start|>assistant\n')).toBe(true);
      expect(reply).toEqual(expected);
    }
  }, 120_000);

  it('qwen3-think-export with enable_thinking=false answers at once (the prompt closed the block)', async () => {
    const expected = [...(await encode('qwen3-think-export', THINKING_REPLY.answer)), EOS];
    for (const { prompt, reply } of await greedy('qwen3-think-export', { enable_thinking: false })) {
      expect(prompt.endsWith('<think>\n\n</think>\n\n')).toBe(true);
      expect(reply).toEqual(expected);
    }
  }, 120_000);

  it('qwen3-think-open-export: its prompt opens the block, so the reply is the thinking, </think>, the answer, EOS', async () => {
    await exportFixtures();
    const expected = [...(await encode('qwen3-think-open-export', `${THINKING_REPLY.thinking}</think>\n\n${THINKING_REPLY.answer}`)), EOS];
    for (const { prompt, reply } of await greedy('qwen3-think-open-export')) {
      expect(prompt.endsWith('<|im_start|>assistant\n<think>\n')).toBe(true);
      expect(reply).toEqual(expected);
    }
  }, 120_000);

  it('holds <think> and </think> as tokens of the real Qwen3 vocabulary', async () => {
    expect(await encode('qwen3-think-export', '<think></think>')).toEqual([151667, 151668]);
  });
});
