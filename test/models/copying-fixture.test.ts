// The designed copying fixture (models/exports/copying.ts) on transformers.js, the reference:
// greedy decoding of a chat prompt gives exactly the designed passage, then EOS, which is what
// Qwen3's real tokenizer makes of the passage's text; so a prompt that holds the passage is
// copied word for word (what prompt lookup is for).
import { AutoModelForCausalLM, Tensor } from '@huggingface/transformers';
import { beforeAll, describe, expect, it } from 'vitest';
import { COPYING_PASSAGE } from '../../models/exports/copying.js';
import { exportFixtures, referencePromptIds, referenceTokenizer } from '../helpers/exports.js';

const NAME = 'qwen3-copy-export';
const EOS = 151645;

beforeAll(async () => {
  await exportFixtures();
}, 600_000);

describe('the designed copying fixture on transformers.js', () => {
  it('encodes its passage to 52 tokens, none twice (each token has one successor)', async () => {
    const ids = (await referenceTokenizer(NAME)).encode(COPYING_PASSAGE, { add_special_tokens: false });
    expect(ids).toHaveLength(52);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('replies to a prompt holding the passage with the passage, then EOS', async () => {
    const passage = (await referenceTokenizer(NAME)).encode(COPYING_PASSAGE, { add_special_tokens: false });
    const model = await AutoModelForCausalLM.from_pretrained(NAME, { dtype: 'fp32', device: 'cpu', local_files_only: true });
    try {
      for (const content of [`Repeat after me: ${COPYING_PASSAGE}`, 'Hello there']) {
        const ids = await referencePromptIds(NAME, [{ role: 'user', content }]);
        const input_ids = new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
        const attention_mask = new Tensor('int64', new BigInt64Array(ids.length).fill(1n), [1, ids.length]);
        const seq = (await model.generate({ input_ids, attention_mask, max_new_tokens: 60, do_sample: false } as never)) as { data: BigInt64Array };
        expect(Array.from(seq.data.slice(ids.length), Number)).toEqual([...passage, EOS]);
      }
    } finally {
      await model.dispose();
    }
  }, 120_000);
});
