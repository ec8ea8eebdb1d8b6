// Real exports decoded and encoded again by the protobufjs ModelProto codec: what comes back
// is a graph onnxruntime runs to the same outputs, with nothing dropped on the way (external
// data references, int64 values past 2^53, com.microsoft ops and their attributes).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import type { InferenceSession } from '../../src/backends/types.js';
import { createModelSession } from '../../src/engine/models/files.js';
import { decodeModelProto, encodeModelProto, int64Number, opsetVersion } from '../../src/onnx/model-proto.js';
import { MessageWriter, concatChunks } from '../../src/onnx/proto.js';
import { floats, promptRows, rightPaddedFeeds } from '../helpers/decoder-feeds.js';
import { exportEntry, exportFixtures } from '../helpers/exports.js';

let fixtures: string;
beforeAll(async () => {
  fixtures = await exportFixtures();
}, 600_000);

// One intra-op thread: the two sessions must compute in the same order to agree bit for bit.
const backend = nodeBackend('cpu', { threads: 1 });
const entry = (name: string, dtype: string) => exportEntry(fixtures, name, dtype);
const roundTrip = (bytes: Uint8Array) => encodeModelProto(decodeModelProto(bytes));

async function outputs(session: InferenceSession): Promise<Record<string, Float32Array>> {
  const result = await session.run(rightPaddedFeeds(backend.Tensor, session, promptRows([7, 4])));
  return Object.fromEntries(Object.entries(result).map(([name, t]) => [name, floats(t as never)]));
}

describe('ONNX ModelProto decoded and encoded again', () => {
  it.each([
    ['llama3-export', 'fp32', 'weights in model.onnx_data'],
    ['qwen3-export', 'fp32', 'weights in numbered external data chunks'],
    ['llama3_2-fused-export', 'q4', "onnxruntime-genai's com.microsoft ops, weights inside"],
    ['phi3-export', 'q4f16', 'float16 KV and logits, MatMulNBits'],
  ])('runs in onnxruntime with every output identical to the file as written: %s %s (%s)', async (name, dtype) => {
    const asWritten = await createModelSession(backend, join(fixtures, name), entry(name, dtype));
    let edited = false;
    const reEncoded = await createModelSession(backend, join(fixtures, name), entry(name, dtype), [], (bytes) => {
      edited = true;
      return roundTrip(bytes);
    });
    expect(edited).toBe(true);
    const [a, b] = [await outputs(asWritten), await outputs(reEncoded)];
    expect(Object.keys(b).sort()).toEqual(Object.keys(a).sort());
    const bits = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    for (const [output, values] of Object.entries(a)) expect(Buffer.compare(bits(b[output]!), bits(values)), output).toBe(0);
  });

  it('keeps every field it reads: a second round trip writes the same bytes as the first', () => {
    for (const file of ['llama3-export/onnx/model.onnx', 'llama3_2-fused-export/onnx/model_q4f16.onnx', 'gemma2-export/onnx/model_fp16.onnx']) {
      const once = roundTrip(readFileSync(join(fixtures, file)));
      expect(Buffer.compare(roundTrip(once), once), file).toBe(0);
    }
  });

  it('leaves weights in their external data files, referenced by name', () => {
    const bytes = readFileSync(join(fixtures, 'llama3-export/onnx/model.onnx'));
    const model = decodeModelProto(bytes);
    const external = model.graph!.initializer!.filter((t) => t.data_location === 1);
    expect(external.length).toBeGreaterThan(5);
    for (const t of external) {
      expect(t.external_data!.find((e) => e.key === 'location')?.value).toBe('model.onnx_data');
      expect(t.raw_data?.length ?? 0).toBe(0);
    }
    const again = roundTrip(bytes);
    expect(again.length).toBeLessThan(bytes.length * 1.1); // no weights pulled in
    expect(decodeModelProto(again).graph!.initializer!.filter((t) => t.data_location === 1).map((t) => t.name)).toEqual(external.map((t) => t.name));
  });

  it('reads the versions and opsets the file declares', () => {
    const model = decodeModelProto(readFileSync(join(fixtures, 'llama3_2-fused-export/onnx/model_q4.onnx')));
    expect(int64Number(model.ir_version)).toBe(8);
    expect(opsetVersion(model)).toBe(17);
    expect(opsetVersion(model, 'com.microsoft')).toBe(1);
  });

  it('keeps int64 values past 2^53 exactly (INT64_MAX as a Slice end, -1)', () => {
    // A node with an `ints` attribute of [INT64_MAX, -1], as exports write Slice ends.
    const attr = new MessageWriter().string(1, 'ends').int(8, 2n ** 63n - 1n).int(8, -1n).int(20, 7).done();
    const node = new MessageWriter().string(1, 'x').string(2, 'y').string(4, 'Slice').message(5, attr).done();
    const graph = new MessageWriter().message(1, node).string(2, 'g').done();
    const model = concatChunks(new MessageWriter().int(1, 8).message(7, graph).done());
    const decoded = decodeModelProto(model);
    const ints = decoded.graph!.node![0]!.attribute![0]!.ints!.map(String);
    expect(ints).toEqual(['9223372036854775807', '-1']);
    expect(Buffer.compare(encodeModelProto(decoded), model)).toBe(0);
  });
});
