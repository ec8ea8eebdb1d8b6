// Bad schemas and grammars against a real `hearth serve` (issue 26): each is a 400
// invalid_value naming its field, never a 500, and none changes what later requests get: the
// canaries (greedy chat, json_schema chat, /generate regex) answer the same before and after,
// and the engine worker never dies (its models never start again).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAMMAR_LIMITS } from '../../src/engine/structured/limits.js';
import { askCanaries } from '../helpers/canaries.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

let server: TestServer;
let key: string;
let canaries: Record<string, unknown>;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', 'svc/tiny-chat,svc/tiny-embed']);
  key = await createKey(server.dataDir, ['--rate-limit', '100000']);
  await waitReady(server.url);
  canaries = await askCanaries(server.url, key);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

async function post(path: string, body: unknown): Promise<{ status: number; error: { message: string; type: string; param: string | null; code: string } }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  expect(res.headers.get('x-request-id')).toBeTruthy();
  const json = (await res.json()) as { error: never };
  return { status: res.status, error: json.error };
}

const nestedProps = (depth: number) => '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + '}}'.repeat(depth);
const chat = (schemaJson: string) =>
  `{"model":"svc/tiny-chat","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${schemaJson}}}}`;
const generate = (sp: Record<string, unknown>) => ({ text: 'hi', sampling_params: { max_new_tokens: 4, ...sp } });

async function expect400(path: string, body: unknown, param: string, ...words: RegExp[]): Promise<void> {
  const r = await post(path, body);
  expect(r.status, JSON.stringify(r.error)).toBe(400);
  expect(r.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_value', param });
  for (const w of words) expect(r.error.message).toMatch(w);
}

describe('bad schemas and grammars', () => {
  it('a /generate json_schema of 600 KB nested 100,000 deep is a 400, and poisons nothing', async () => {
    const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    await expect400('/generate', generate({ json_schema: deep }), 'sampling_params.json_schema', new RegExp(String(GRAMMAR_LIMITS.maxChars)));
    expect(await askCanaries(server.url, key)).toEqual(canaries);
  }, 60_000);

  it('response_format schemas nested 3,000, 5,000 and 400 levels, {"$ref":"#"} and two $defs naming each other are 400s', async () => {
    for (const depth of [3_000, 5_000, 400]) {
      await expect400('/v1/chat/completions', chat(nestedProps(depth)), 'response_format', /nested more than 32 levels/);
    }
    await expect400('/v1/chat/completions', chat('{"$ref":"#"}'), 'response_format', /\$ref cycle/);
    await expect400('/v1/chat/completions', chat('{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}'), 'response_format', /\$ref cycle/);
    const r = await post('/v1/chat/completions', chat(nestedProps(400)));
    expect(r.error.message).not.toMatch(/memory access out of bounds/);
    expect(await askCanaries(server.url, key)).toEqual(canaries);
  }, 60_000);

  it('a tool whose parameters nest 5,000 deep is a 400 naming the tool', async () => {
    const body = `{"model":"svc/tiny-chat","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"tool_choice":"required","tools":[{"type":"function","function":{"name":"f","parameters":${nestedProps(5_000)}}}]}`;
    await expect400('/v1/chat/completions', body, 'tools[0].function.parameters', /nested more than 32 levels/);
  });

  it('/generate with ebnf "root ::= root" or json_schema {"$ref":"#"} is a 400', async () => {
    await expect400('/generate', generate({ ebnf: 'root ::= root' }), 'sampling_params.ebnf', /matches no output/);
    await expect400('/generate', generate({ json_schema: '{"$ref":"#"}' }), 'sampling_params.json_schema', /\$ref cycle/);
    expect(await askCanaries(server.url, key)).toEqual(canaries);
  });

  it('a schema inside every limit that takes XGrammar minutes is a 400 after the compile budget, while a stream keeps decoding', async () => {
    // 300 properties of which at most 150: a grammar of millions of characters.
    const slow = { type: 'object', properties: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, { type: 'string' }])), maxProperties: 150 };
    const arrivals: number[] = [];
    const stream = fetch(`${server.url}/generate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'Once', stream: true, sampling_params: { max_new_tokens: 400, ignore_eos: true, temperature: 0 } }),
    }).then(async (res) => {
      const reader = res.body!.getReader();
      while (!(await reader.read()).done) arrivals.push(Date.now());
    });
    await new Promise((r) => setTimeout(r, 200));
    const t0 = Date.now();
    await expect400('/generate', generate({ json_schema: JSON.stringify(slow) }), 'sampling_params.json_schema', new RegExp(`longer than ${GRAMMAR_LIMITS.compileMs} ms`));
    const t1 = Date.now();
    expect(t1 - t0).toBeLessThan(GRAMMAR_LIMITS.compileMs + 5_000);
    await stream;
    // Decoding went on while the grammar compiled: no gap of a second between two chunks.
    const during = arrivals.filter((t) => t >= t0 && t <= t1);
    const gaps = during.slice(1).map((t, i) => t - during[i]!);
    expect(Math.max(0, ...gaps)).toBeLessThan(1_000);
  }, 60_000);

  it('a long mix of grammars XGrammar refuses leaves the canaries as they were, and the worker alive', async () => {
    for (let i = 0; i < 120; i++) {
      const bad = [{ ebnf: `root ::= ( "x${i}"` }, { json_schema: `{"type":"object","properties":{"a":{"$ref":"#/$defs/n${i}"}}}` }, { regex: `[a-${i % 10}` }][i % 3]!;
      const r = await post('/generate', generate(bad));
      expect(r.status, JSON.stringify(r.error)).toBe(400);
      if (i % 40 === 39) expect(await askCanaries(server.url, key)).toEqual(canaries);
    }
    expect(await askCanaries(server.url, key)).toEqual(canaries);
    // One "model starting" per model, at start: the engine worker never restarted.
    expect(server.output().match(/"model starting"/g)).toHaveLength(2);
  }, 180_000);
});
