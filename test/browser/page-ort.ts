// Runs in the demo page (imported through Vite by the browser tests): onnxruntime-web itself,
// without Hearth, for tests that pin down what its providers do with one operator.
import * as ort from 'onnxruntime-web';

/** Deterministic values in [-1, 1). */
const values = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => (((i * 7919 + seed * 104729) % 2000) / 1000) - 1);

/**
 * One GroupQueryAttention decode step (graph from the test: inputs qkv, past_key, past_value,
 * attention_mask) for rows whose caches hold `pasts[b]` tokens: each row alone, then all rows
 * in one batch, right padded (row b's cache at [0, pasts[b]), its mask ones at [0, pasts[b]]),
 * as a builder graph's batches are. The largest difference of each row's output from alone.
 */
export async function gqaBatchedDecode(graph: number[], ep: 'wasm' | 'webgpu', pasts: number[], dims: { qkv: number; kvHeads: number; headDim: number }) {
  ort.env.wasm.wasmPaths = '/ort/';
  ort.env.wasm.numThreads = 1;
  const session = await ort.InferenceSession.create(Uint8Array.from(graph), { executionProviders: [ep], logSeverityLevel: 3 });
  const row = dims.kvHeads * dims.headDim;
  const W = Math.max(...pasts);
  try {
    const run = async (rows: number[], width: number) => {
      const B = rows.length;
      const pastK = new Float32Array(B * width * row);
      const pastV = new Float32Array(B * width * row);
      rows.forEach((p, b) => {
        pastK.set(values(p * row, 10 + p), b * width * row);
        pastV.set(values(p * row, 20 + p), b * width * row);
      });
      const qkv = new Float32Array(B * dims.qkv);
      rows.forEach((p, b) => qkv.set(values(dims.qkv, 30 + p), b * dims.qkv));
      const mask = BigInt64Array.from({ length: B * (width + 1) }, (_, k) => (k % (width + 1) <= rows[Math.floor(k / (width + 1))]! ? 1n : 0n));
      const out = await session.run({
        qkv: new ort.Tensor('float32', qkv, [B, 1, dims.qkv]),
        past_key: new ort.Tensor('float32', pastK, [B, dims.kvHeads, width, dims.headDim]),
        past_value: new ort.Tensor('float32', pastV, [B, dims.kvHeads, width, dims.headDim]),
        attention_mask: new ort.Tensor('int64', mask, [B, width + 1]),
      });
      return out.output!.data as Float32Array;
    };
    const alone = [];
    for (const p of pasts) alone.push(await run([p], p));
    const together = await run(pasts, W);
    const n = alone[0]!.length;
    return alone.map((a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - together[b * n + i]!)), 0));
  } finally {
    await session.release();
  }
}
