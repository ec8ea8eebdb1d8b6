// Properties: for random JSON schemas (objects, arrays, enums, nesting), whatever the
// fixture model writes under the schema's grammar validates against the schema, and the
// arguments of every tool call it makes under random tools validate against that tool's.
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { EngineApi } from '../../../src/engine/protocol.js';
import { toolCallGrammar } from '../../../src/api/tools/syntax.js';
import { parseToolCalls } from '../../../src/api/tools/parser.js';
import { fixtures } from '../../helpers/fixtures.js';

let engine: EngineApi;
const ajv = new Ajv({ strict: false });

// Strings and arrays are bounded so that gibberish cannot run past max_tokens.
const leaf = fc.oneof(
  fc.constant({ type: 'string', maxLength: 6 }),
  fc.constant({ type: 'string', pattern: '^[a-z ]{0,8}$' }),
  fc.record({ type: fc.constant('integer'), minimum: fc.integer({ min: -50, max: 0 }), maximum: fc.integer({ min: 1, max: 50 }) }),
  fc.constant({ type: 'boolean' }),
  fc.uniqueArray(fc.stringMatching(/^[a-z]{1,5}$/), { minLength: 1, maxLength: 4 }).map((e) => ({ enum: e })),
);
const { schema } = fc.letrec((tie) => ({
  schema: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('object'), tie('array')),
  array: fc.record({ type: fc.constant('array'), items: tie('schema'), maxItems: fc.integer({ min: 1, max: 3 }) }),
  object: fc
    .dictionary(fc.stringMatching(/^[a-z]{1,6}$/), tie('schema'), { minKeys: 1, maxKeys: 3 })
    .map((properties) => ({ type: 'object', properties, required: Object.keys(properties), additionalProperties: false })),
}));
const rootSchema = fc.oneof(schema.filter((s) => (s as { type?: string }).type === 'object'), schema);

beforeAll(async () => {
  const dir = await fixtures();
  engine = createEngine(nodeBackend('cpu'));
  await engine.load([
    { id: 'svc/tiny-chat', task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price: { input_per_1m: 0, output_per_1m: 0 } },
  ]);
  for (let i = 0; i < 200 && (await engine.models()).some((m) => m.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 50));
}, 60_000);

afterAll(() => engine?.dispose());

let n = 0;
const run = (grammar: Parameters<EngineApi['generate']>[0]['sampling']['grammar'], seed: number) =>
  engine.generate(
    {
      id: `p${n++}`,
      model: 'svc/tiny-chat',
      prompt: { messages: [{ role: 'user', content: 'Fill this in.' }] },
      sampling: {
        temperature: 1, seed, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
        stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1, max_tokens: 400, grammar,
      },
    },
    () => {},
  );

it('every tool call for random parameter schemas names an offered tool with arguments valid for it', async () => {
  const object = schema.filter((s) => (s as { type?: string }).type === 'object');
  await fc.assert(
    fc.asyncProperty(fc.array(object, { minLength: 1, maxLength: 3 }), fc.boolean(), fc.integer({ min: 0, max: 1000 }), async (params, parallel, seed) => {
      const tools = params.map((parameters, i) => ({ name: `tool_${i}`, parameters: parameters as Record<string, unknown> }));
      const r = await run(toolCallGrammar(tools, 'required', parallel), seed);
      const { calls } = parseToolCalls(r.text);
      if (r.finish_reason === 'stop') expect(calls.length).toBeGreaterThan(0);
      if (!parallel) expect(calls.length).toBe(1);
      // A parallel reply cut by max_tokens leaves its last call unfinished; the earlier ones are whole.
      for (const call of r.finish_reason === 'stop' ? calls : calls.slice(0, -1)) {
        const tool = tools.find((t) => t.name === call.name)!;
        expect(tool, call.name).toBeDefined();
        expect(ajv.validate(tool.parameters, JSON.parse(call.arguments)), call.arguments).toBe(true);
      }
    }),
    { numRuns: 20, seed: 7 },
  );
}, 120_000);

it('every output for a random schema validates against it', async () => {
  await fc.assert(
    fc.asyncProperty(rootSchema, fc.integer({ min: 0, max: 1000 }), async (s, seed) => {
      const r = await run({ type: 'json_schema', schema: JSON.stringify(s), param: 'response_format' }, seed);
      expect(r.finish_reason).toBe('stop');
      let value: unknown;
      expect(() => (value = JSON.parse(r.text)), JSON.stringify(r.text)).not.toThrow();
      expect(ajv.validate(s as object, value), JSON.stringify(r.text)).toBe(true);
    }),
    { numRuns: 40, seed: 10 },
  );
}, 120_000);
