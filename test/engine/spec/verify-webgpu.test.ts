// Speculative steps on onnxruntime-node's WebGPU (SwiftShader here), the code path a GPU takes:
// a verify step's logits at every drafted position, and the rollback of rejected drafts as a
// copy between GPU buffers. Greedy tokens equal the CPU's without speculation, drafts were
// accepted (and, with the fused graph, rejected too), and the cache never came back to the host.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COPYING_PASSAGE } from '../../../models/exports/copying.js';
import { Scheduler } from '../../../src/engine/scheduler.js';
import { Sequence } from '../../../src/engine/sequence.js';
import { GREEDY, generate, loadOn, user } from '../../helpers/device-runs.js';
import { exportFixtures } from '../../helpers/exports.js';
import { NODE_WEBGPU_SKIP } from '../../helpers/node-webgpu.js';

// SwiftShader's fused attention is wrong from 32 new tokens a run: prompts go in chunks below that (drafts stay below it too).
const PREFILL_CHUNK = 31;

describe.skipIf(NODE_WEBGPU_SKIP)('speculative steps on WebGPU in Node', () => {
  it("plain attention, Qwen3's vocabulary: the copying fixture's reply, most of it from drafts found by prompt lookup", async () => {
    const folder = join(await exportFixtures(), 'qwen3-copy-export');
    const prompt = user(`Repeat after me: ${COPYING_PASSAGE}`);
    const cpu = await loadOn('cpu', folder);
    const expected = (await generate(new Scheduler(cpu.lm, { speculative: 'off' }), cpu, prompt, { max_tokens: 60, ignore_eos: false })).token_ids;
    await cpu.lm.dispose();
    const gpu = await loadOn('webgpu', folder);
    try {
      const s = new Scheduler(gpu.lm, { speculative: 'ngram', prefillChunk: PREFILL_CHUNK });
      expect((await generate(s, gpu, prompt, { max_tokens: 60, ignore_eos: false })).token_ids).toEqual(expected);
      // How long drafts are follows the measured step cost: at least half the reply comes from them.
      expect(s.stats().specAccepted).toBeGreaterThanOrEqual(26);
      expect(gpu.lm.reads).toEqual({ batch: 0, prefixCache: 0 });
    } finally {
      await gpu.lm.dispose();
    }
  }, 300_000);

  it('GroupQueryAttention (a right-padded cache, the logits-pick edit): drafts accepted and rejected give the CPU’s tokens', async () => {
    // Random weights never repeat their prompt, so the drafts here come from the CPU's own reply,
    // every other one with a wrong token at its third place: both outcomes of a verify step.
    const folder = join(await exportFixtures(), 'llama3_2-fused-export');
    const messages = user('What is fire?');
    const cpu = await loadOn('cpu', folder);
    const expected = (await generate(new Scheduler(cpu.lm, { speculative: 'off' }), cpu, messages, { max_tokens: 14 })).token_ids;
    await cpu.lm.dispose();
    const gpu = await loadOn('webgpu', folder);
    try {
      const s = new Scheduler(gpu.lm, { speculative: 'ngram', prefillChunk: PREFILL_CHUNK });
      const { ids, text } = gpu.codec.encodeChat(messages);
      const seq = new Sequence({ id: 'fused', model: 'm', prompt: { messages }, sampling: { ...GREEDY, max_tokens: 14 } }, ids, text, gpu.codec, { eosIds: gpu.lm.eosIds, contextLength: 4096 }, () => undefined);
      let drafts = 0;
      seq.drafts.next = (history, room) => {
        const made = history.length - ids.length;
        const draft = expected.slice(made, made + Math.min(4, room));
        if (drafts++ % 2 === 1 && draft.length > 2) draft[2] = (draft[2]! + 1) % gpu.lm.vocabSize;
        return draft;
      };
      s.submit(seq);
      expect((await seq.result).token_ids).toEqual(expected);
      const { specDrafted, specAccepted } = s.stats();
      expect(specAccepted).toBeGreaterThan(0);
      expect(specDrafted).toBeGreaterThan(specAccepted);
      expect(gpu.lm.reads).toEqual({ batch: 0, prefixCache: 0 });
    } finally {
      await gpu.lm.dispose();
    }
  }, 300_000);
});
