// npm run bench:kv-residency -- --device webgpu [--tokens N] [--out FILE]
// A raw greedy decode loop on onnxruntime-node (no engine, one sequence), run
// twice on the bench model: once with the KV cache read back to the CPU at every
// step (what the engine's runner does today), once with `present.*` left on the
// device (`preferredOutputLocation: 'gpu-buffer'`) and fed straight back. The
// difference is what keeping the cache on the device is worth; both runs must
// produce the same tokens.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as ort from 'onnxruntime-node';
import { FIXTURES_DIR, writeFixtures } from '../models/index.js';

const { values: args } = parseArgs({
  options: {
    device: { type: 'string', default: 'webgpu' },
    tokens: { type: 'string', default: '128' },
    prompt: { type: 'string', default: '48' },
    out: { type: 'string' },
  },
});
const TOKENS = Number(args.tokens);
const PROMPT = Number(args.prompt);

await writeFixtures({ preset: 'bench', ifMissing: true });
const file = join(FIXTURES_DIR, 'bench-chat', 'onnx', 'model.onnx');

async function decodeLoop(resident: boolean) {
  const probe = await ort.InferenceSession.create(file, { executionProviders: ['cpu'] });
  const presents = probe.outputNames.filter((n) => n.startsWith('present.'));
  await probe.release();
  const session = await ort.InferenceSession.create(file, {
    executionProviders: [args.device as string],
    graphOptimizationLevel: 'all',
    preferredOutputLocation: resident ? Object.fromEntries(presents.map((n) => [n, 'gpu-buffer' as const])) : undefined,
  });
  // Shapes from the session: [batch, kv_heads, past, head_dim] with fixed kv_heads and head_dim.
  const meta = session.inputMetadata.find((m) => m.name === 'past_key_values.0.key');
  const shape = meta && 'shape' in meta ? meta.shape : [];
  const [kvHeads, headDim] = [Number(shape[1]), Number(shape[3])];
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  let past: Record<string, ort.Tensor> = Object.fromEntries(
    pastNames.map((n) => [n, new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, headDim])]),
  );

  const tokens: number[] = [];
  let ids = Array.from({ length: PROMPT }, (_, i) => 10 + ((i * 7) % 200));
  let pos = 0;
  const stepMs: number[] = [];
  for (let step = 0; step <= TOKENS; step++) {
    const t0 = performance.now();
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(pos + ids.length).fill(1n), [1, pos + ids.length]),
      ...past,
    };
    if (session.inputNames.includes('position_ids')) {
      feeds.position_ids = new ort.Tensor('int64', BigInt64Array.from(ids, (_, i) => BigInt(pos + i)), [1, ids.length]);
    }
    const out = await session.run(feeds);
    const logits = out.logits.data as Float32Array;
    const vocab = out.logits.dims[2];
    let best = 0;
    for (let v = 1; v < vocab; v++) if (logits[(ids.length - 1) * vocab + v] > logits[(ids.length - 1) * vocab + best]) best = v;
    for (const t of Object.values(past)) if (t.location === 'gpu-buffer') t.dispose();
    past = Object.fromEntries(pastNames.map((n) => [n, out[n.replace('past_key_values.', 'present.')]]));
    pos += ids.length;
    ids = [best];
    tokens.push(best);
    if (step > 0) stepMs.push(performance.now() - t0); // step 0 is the prefill
  }
  for (const t of Object.values(past)) if (t.location === 'gpu-buffer') t.dispose();
  await session.release();
  const sorted = [...stepMs].sort((a, b) => a - b);
  return { tokens, median_step_ms: sorted[sorted.length >> 1], tokens_per_s: 1000 / sorted[sorted.length >> 1] };
}

const viaCpu = await decodeLoop(false);
const onDevice = await decodeLoop(true);
const results = {
  date: new Date().toISOString(),
  device: args.device,
  model: 'svc/bench-chat',
  prompt_tokens: PROMPT,
  decode_tokens: TOKENS,
  kv_via_cpu: { median_step_ms: viaCpu.median_step_ms, tokens_per_s: viaCpu.tokens_per_s },
  kv_on_device: { median_step_ms: onDevice.median_step_ms, tokens_per_s: onDevice.tokens_per_s },
  speedup: viaCpu.median_step_ms / onDevice.median_step_ms,
  same_tokens: viaCpu.tokens.join() === onDevice.tokens.join(),
};
writeFileSync(args.out ?? join(import.meta.dirname, `kv-residency-${args.device}.json`), `${JSON.stringify(results, null, 2)}\n`);
console.log(JSON.stringify(results, null, 2));
