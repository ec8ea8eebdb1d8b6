// transformers.js runs the tiny-chat fixture and its greedy tokens equal the reference's.
import { AutoModelForCausalLM, AutoTokenizer, env } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { fixtureTokenizer, tinyChat } from '../../models/index.js';
import { greedy } from '../../models/reference.js';
import { encoder, fixturesDir } from './helpers.js';

describe('transformers.js on the tiny-chat fixture', () => {
  it('generates greedily the same tokens as the reference loop', async () => {
    env.localModelPath = await fixturesDir();
    env.allowRemoteModels = false;
    const tok = await AutoTokenizer.from_pretrained('tiny-chat', { local_files_only: true });
    const model = await AutoModelForCausalLM.from_pretrained('tiny-chat', { local_files_only: true, device: 'cpu', dtype: 'fp32' });
    const design = tinyChat();
    const enc = encoder();
    for (const content of ['What is the capital of France?', 'Tell me a story about a cat and a dog.']) {
      const text = tok.apply_chat_template([{ role: 'user', content }], { tokenize: false, add_generation_prompt: true }) as string;
      const inputs = tok(text, { add_special_tokens: false });
      const out = (await model.generate({ ...inputs, max_new_tokens: 48, do_sample: false })) as unknown as { data: BigInt64Array };
      const all = Array.from(out.data, Number);
      const prompt = enc.encode(text);
      expect(all.slice(0, prompt.length)).toEqual(prompt);
      const ref = greedy(design.weights, prompt, 48, [design.eos, fixtureTokenizer().specialIds['<|endoftext|>']]);
      expect(all.slice(prompt.length)).toEqual(ref.tokens);
      expect(ref.tokens.at(-1)).toBe(design.eos);
    }
    await model.dispose();
  });
});
