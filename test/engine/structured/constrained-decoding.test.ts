// The engine in-process on the fixture model, decoding under a grammar: the fixture
// writes gibberish, so output that parses and validates is the grammar's doing.
import { Ajv } from 'ajv';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import type { EngineApi, GenerateRequest, GrammarSpec, SamplingParams, TokenEvent } from '../../../src/engine/protocol.js';
import { fixtures } from '../../helpers/fixtures.js';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

let engine: EngineApi;
const ajv = new Ajv({ strict: false });

const greedy: SamplingParams = {
  temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
let n = 0;
const req = (grammar: DistributiveOmit<GrammarSpec, 'param'>, sampling: Partial<SamplingParams> = {}): GenerateRequest => ({
  id: `g${n++}`,
  model: 'svc/tiny-chat',
  prompt: { messages: [{ role: 'user', content: 'Describe a person.' }] },
  sampling: { ...greedy, max_tokens: 200, ...sampling, grammar: { ...grammar, param: 'response_format' } as GrammarSpec },
});

async function generate(r: GenerateRequest) {
  const events: TokenEvent[] = [];
  const result = await engine.generate(r, (e) => events.push(e));
  return { result, streamed: events.map((e) => e.text).join('') };
}

const person = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 12 },
    age: { type: 'integer', minimum: 0, maximum: 120 },
    role: { enum: ['admin', 'user', 'guest'] },
    tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 3 },
  },
  required: ['name', 'age', 'role', 'tags'],
  additionalProperties: false,
};

beforeAll(async () => {
  const dir = await fixtures();
  engine = createEngine(nodeBackend('cpu'));
  const price = { input_per_1m: 0.1, output_per_1m: 0.4 };
  await engine.load([{ id: 'svc/tiny-chat', task: 'chat', class: 'tiny', context_length: 2048, source: join(dir, 'tiny-chat'), price }]);
  for (let i = 0; i < 200 && (await engine.models()).some((m) => m.status === 'starting'); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
}, 60_000);

afterAll(() => engine?.dispose());

describe('constrained decoding on the fixture model', () => {
  it('writes JSON that validates against the schema, and streams exactly that text', async () => {
    const { result, streamed } = await generate(req({ type: 'json_schema', schema: JSON.stringify(person) }));
    expect(result.finish_reason).toBe('stop');
    expect(ajv.validate(person, JSON.parse(result.text))).toBe(true);
    expect(streamed).toBe(result.text);
  });

  it('writes a JSON object for json_object', async () => {
    const { result } = await generate(req({ type: 'json_object' }, { temperature: 1, seed: 3 }));
    expect(result.finish_reason).toBe('stop');
    expect(JSON.parse(result.text)).toBeTypeOf('object');
  });

  it('follows a regex', async () => {
    const { result } = await generate(req({ type: 'regex', pattern: '[a-z]{3,8}@[a-z]{2,6}\\.(com|org)' }));
    expect(result.text).toMatch(/^[a-z]{3,8}@[a-z]{2,6}\.(com|org)$/);
  });

  it('finishes a regex that XGrammar reads byte by byte, whatever byte is drawn first', async () => {
    // `.` takes one byte: after a lead byte such as DF, XGrammar wants the `"`, where well-formed
    // UTF-8 would want a continuation byte. A hot sampler draws such bytes; each draw must still end.
    const hot = { temperature: 1.5, max_tokens: 8 };
    const results = await Promise.all(Array.from({ length: 40 }, (_, seed) => generate(req({ type: 'regex', pattern: '."' }, { ...hot, seed }))));
    for (const { result } of results) {
      expect(result.finish_reason).toBe('stop');
      expect(result.token_ids.length).toBeLessThanOrEqual(3);
    }
    const firstBytes = results.map(({ result }) => result.token_ids[0]!);
    expect(firstBytes.some((id) => id >= 0xc2 && id <= 0xf4), 'some draw starts with a lead byte').toBe(true);
  });

  it('refuses grammars that cannot compile, each with its own reason and field, even at once', async () => {
    const bad = (schema: string) => generate(req({ type: 'json_schema', schema })).catch((e: unknown) => e);
    const [a, b] = await Promise.all([bad('{"type":"strange"}'), bad('{"type":"string","pattern":"(?=x)"}')]);
    expect(a).toMatchObject({ code: 'invalid_value', param: 'response_format' });
    expect((a as Error).message).toContain('strange');
    expect((b as Error).message).toContain('Lookahead');
  });

  it('masks each row of a batch by its own grammar and leaves unconstrained rows as they were', async () => {
    const plain = (content: string): GenerateRequest => ({
      id: `g${n++}`, model: 'svc/tiny-chat', prompt: { messages: [{ role: 'user', content }] }, sampling: { ...greedy, max_tokens: 60 },
    });
    const alone = await generate(plain('Tell me about the sea.'));
    const flag = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false };
    const [a, b, c] = await Promise.all([
      generate(req({ type: 'json_schema', schema: JSON.stringify(person) })),
      generate(plain('Tell me about the sea.')),
      generate(req({ type: 'json_schema', schema: JSON.stringify(flag) })),
    ]);
    expect(ajv.validate(person, JSON.parse(a.result.text))).toBe(true);
    expect(b.result.text).toBe(alone.result.text);
    expect(ajv.validate(flag, JSON.parse(c.result.text))).toBe(true);
  });

  it('compiles afresh after a redeploy, with the old instance\'s grammars freed', async () => {
    await generate(req({ type: 'json_object' }));
    await engine.redeploy!('svc/tiny-chat');
    for (let i = 0; i < 200 && (await engine.models())[0]!.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
    const { result } = await generate(req({ type: 'json_schema', schema: JSON.stringify(person) }));
    expect(ajv.validate(person, JSON.parse(result.text))).toBe(true);
  });
});
