// A json_schema answer on onnxruntime-node's WebGPU (SwiftShader here), the KV cache on the
// GPU and the grammar masking each step's logits on the CPU: the same JSON the CPU writes,
// and it validates. The fixture writes gibberish unconstrained, so valid JSON is the grammar's.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineApi, GrammarSpec } from '../../src/engine/protocol.js';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';
import { engineOn, greedy, request } from '../helpers/engine-on.js';

const schema = {
  type: 'object',
  properties: { name: { type: 'string', maxLength: 6 }, age: { type: 'integer', minimum: 0, maximum: 99 } },
  required: ['name', 'age'],
  additionalProperties: false,
};
const grammar: GrammarSpec = { type: 'json_schema', schema: JSON.stringify(schema), param: 'response_format' };
let cpuText: string;
let gpu: EngineApi;

beforeAll(async () => {
  if (NODE_WEBGPU_SKIP) return;
  const cpu = await engineOn('cpu');
  cpuText = (await cpu.generate(request('Describe a person.', greedy(40, { grammar })), () => undefined)).text;
  await cpu.dispose();
  gpu = await engineOn('webgpu');
}, 120_000);

afterAll(() => gpu?.dispose());

describe.skipIf(NODE_WEBGPU_SKIP)('structured output on WebGPU in Node', () => {
  it("writes the CPU's JSON for a json_schema, and it validates", async () => {
    const r = await gpu.generate(request('Describe a person.', greedy(40, { grammar })), () => undefined);
    expect(r.finish_reason).toBe('stop');
    expect(r.text).toBe(cpuText);
    expect(new Ajv({ strict: false }).validate(schema, JSON.parse(r.text))).toBe(true);
  }, 180_000);
});
