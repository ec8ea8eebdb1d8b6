// Property-based fuzzing (fast-check) of structured outputs against a real `hearth serve`:
// random, deep, cyclic, oversized and malformed JSON schemas (response_format, tools'
// parameters, /generate json_schema), regexes and EBNF grammars, each as a small valid
// request around it. Every answer is a 200 or a 4xx in the error envelope with an
// x-request-id, never a 5xx; logprobs are finite numbers; and the canaries (greedy chat,
// json_schema chat, /generate regex) answer the same before, during and after, with the
// engine worker never restarting.
//
// The seed is printed at the start (fixed in npm test; npm run fuzz draws fresh ones; FUZZ_SEED=<n> replays a run; FUZZ_SCALE=<x> multiplies
// the case counts; FUZZ_DEBUG=1 prints every refusal), and a failing case is printed as a curl command.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askCanaries } from '../helpers/canaries.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { fuzzParams, fuzzSeed, replayable } from './replay.js';

const TIMEOUT_MS = 30_000; // per request: a hang fails the case
const SEED = fuzzSeed('structured');

let server: TestServer;
let key: string;
let baseline: Record<string, unknown>;
const statuses: Record<string, number> = {};

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', 'svc/tiny-chat,svc/tiny-embed']);
  key = await createKey(server.dataDir, ['--name', 'fuzz', '--rate-limit', '100000000']);
  await waitReady(server.url);
  baseline = await askCanaries(server.url, key);
}, 120_000);

afterAll(async () => {
  if (!server) return;
  console.log(`fuzz structured: statuses ${JSON.stringify(statuses)}`);
  expect(await server.stop()).toBe(0);
});

// ---------- arbitraries ----------

const count = fc.oneof(fc.integer({ min: 0, max: 12 }), fc.constantFrom(100, 10_000, 100_000, 2 ** 31, -1));

const REGEX_PIECES = ['a', 'b', '[a-z]', '[^"]', '\\d', '.', '\\w', '[0-9]', '(', ')', '|', '*', '+', '?', '{2}', '{1,3}', '{0,}', '{1000,}', '{1,100000}', '\\', '[', '^', '$', '(?:', '(?=', '"', ' '];
const regex = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...REGEX_PIECES), { maxLength: 16 }).map((xs) => xs.join('')) },
  fc.constantFrom('[a-z]+', '\\d{3}-\\d{4}', '(yes|no)', '[A-Z]{3}-[0-9]{2,4}', '[a-z]+@[a-z]+\\.com', '(a|aa)+', ''),
  fc.integer({ min: 1, max: 300 }).map((d) => '('.repeat(d) + 'a' + ')'.repeat(d)),
  fc.tuple(fc.integer({ min: 1, max: 2_000 }), fc.integer({ min: 1, max: 2_000 })).map(([m, n]) => `(a{1,${m}}){1,${n}}`),
);

const EBNF_PIECES = ['"a"', '"b"', '(', ')', '|', '*', '+', '?', 'root', 'x', '[a-z]', '{2,3}', '{1,100000}', '"\\n"', '#c\n', '\nx ::= ', '::='];
const ebnf = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...EBNF_PIECES), { maxLength: 14 }).map((xs) => 'root ::= ' + xs.join(' ')) },
  fc.constantFrom('root ::= root', 'root ::= a\na ::= root', 'root ::= "a" root | "b"', 'root ::= (', 'root ::= "x"', 'root ::= [a-z]+ ("," [a-z]+)*', 'root ::= nowhere', 'a ::= "x"', 'root ::= [z-a]'),
  fc.integer({ min: 1, max: 300 }).map((d) => 'root ::= ' + '('.repeat(d) + '"a"' + ')'.repeat(d)),
);

const leaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ type: fc.constantFrom('string', 'integer', 'number', 'boolean', 'null', 'object', 'array', 'nope') }),
  fc.record({ type: fc.constant('string'), minLength: count, maxLength: count }, { requiredKeys: ['type'] }),
  fc.record({ type: fc.constant('string'), pattern: regex }),
  fc.record({ type: fc.constant('string'), format: fc.constantFrom('date-time', 'email', 'uuid', 'date', 'ipv4', 'uri', 'nope') }),
  fc.record({ enum: fc.array(fc.oneof(fc.string({ maxLength: 6 }), fc.integer(), fc.constant(null)), { maxLength: 6 }) }),
  fc.record({ const: fc.jsonValue({ maxDepth: 2 }) }),
  fc.record({ type: fc.constantFrom('integer', 'number'), minimum: fc.oneof(fc.integer(), fc.constant(-1e300)), maximum: fc.oneof(fc.integer(), fc.constant(1e300)) }, { requiredKeys: ['type'] }),
  fc.record({ $ref: fc.constantFrom('#', '#/$defs/a', '#/properties/a', '#/nope', 'http://example.com/s.json', '#/$defs/a/properties/b', 7) }),
  fc.constantFrom({}, true, false, null, 'string', []),
);

const schema = fc.letrec<{ s: unknown }>((tie) => ({
  s: fc.oneof(
    { maxDepth: 4, depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record(
      {
        type: fc.constant('object'),
        properties: fc.dictionary(fc.constantFrom('a', 'b', 'c', 'x y', '$ref', 'enum', '"'), tie('s'), { maxKeys: 4 }),
        required: fc.array(fc.constantFrom('a', 'b', 'c', 'z'), { maxLength: 3 }),
        additionalProperties: fc.oneof(fc.boolean(), tie('s')),
        maxProperties: count,
      },
      { requiredKeys: ['type'] },
    ),
    fc.record({ type: fc.constant('array'), items: tie('s'), minItems: count, maxItems: count, prefixItems: fc.array(tie('s'), { maxLength: 2 }) }, { requiredKeys: ['type'] }),
    fc.record({ anyOf: fc.array(tie('s'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ oneOf: fc.array(tie('s'), { minLength: 1, maxLength: 3 }) }),
    fc.record({ allOf: fc.array(tie('s'), { minLength: 1, maxLength: 2 }) }),
    fc.record({ $defs: fc.record({ a: tie('s') }), $ref: fc.constant('#/$defs/a') }),
    fc.record({ $defs: fc.record({ a: tie('s'), b: fc.constant({ $ref: '#/$defs/a' }) }), type: fc.constant('object'), properties: fc.record({ a: fc.constant({ $ref: '#/$defs/b' }) }) }),
  ),
})).s;

/** JSON text of a schema: a random one, or one nested deep (built as text: JSON.stringify recurses). */
const schemaText = fc.oneof(
  { weight: 6, arbitrary: schema.map((s) => JSON.stringify(s)) },
  fc.tuple(fc.constantFrom(16, 33, 100, 400, 3_000, 5_000), fc.constantFrom('props', 'items', 'anyOf', 'plain')).map(([depth, shape]) => {
    const [open, leafText, close] = {
      props: ['{"type":"object","properties":{"a":', '{"type":"string"}', '}}'],
      items: ['{"type":"array","items":', '{"type":"integer"}', '}'],
      anyOf: ['{"anyOf":[', '{"type":"string"}', ']}'],
      plain: ['{"a":', '1', '}'],
    }[shape] as [string, string, string];
    return open.repeat(depth) + leafText + close.repeat(depth);
  }),
  fc.constantFrom('{"$ref":"#"}', '{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}', '{"allOf":[{"$ref":"#"}]}'),
);

interface Case {
  path: string;
  body: string;
}

const sampling = fc.record({
  max_tokens: fc.integer({ min: 1, max: 8 }),
  temperature: fc.constantFrom(0, 0.7, 1.5),
  logprobs: fc.boolean(),
  stream: fc.boolean(),
});

const chatHead = (s: { max_tokens: number; temperature: number; logprobs: boolean; stream: boolean }) =>
  `"model":"svc/tiny-chat","messages":[{"role":"user","content":"hi"}],"max_tokens":${s.max_tokens},"temperature":${s.temperature},"stream":${s.stream}` +
  (s.logprobs ? ',"logprobs":true,"top_logprobs":20,"frequency_penalty":-1' : '');

const cases: fc.Arbitrary<Case> = fc.oneof(
  fc.tuple(schemaText, sampling).map(([text, s]) => ({
    path: '/v1/chat/completions',
    body: `{${chatHead(s)},"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":${text}}}}`,
  })),
  fc.tuple(schemaText, sampling, fc.constantFrom('"required"', '"auto"', '"none"', '{"type":"function","function":{"name":"f"}}')).map(([text, s, choice]) => ({
    path: '/v1/chat/completions',
    body: `{${chatHead(s)},"tool_choice":${choice},"tools":[{"type":"function","function":{"name":"f","parameters":${text}}}]}`,
  })),
  fc.tuple(fc.oneof(schemaText.map((t) => ({ json_schema: t })), regex.map((r) => ({ regex: r })), ebnf.map((e) => ({ ebnf: e }))), sampling).map(([grammar, s]) => ({
    path: '/generate',
    body: JSON.stringify({
      text: 'hi',
      stream: s.stream,
      sampling_params: { max_new_tokens: s.max_tokens, temperature: s.temperature, ...grammar },
      ...(s.logprobs ? { return_logprob: true, top_logprobs_num: 20 } : {}),
    }),
  })),
);

// ---------- checking an answer ----------

function logprobsOf(doc: unknown): unknown[] {
  const out: unknown[] = [];
  const d = doc as { choices?: { logprobs?: { content?: { logprob: unknown; top_logprobs: { logprob: unknown }[] }[] } | null }[]; meta_info?: { output_token_logprobs?: unknown[][]; output_top_logprobs?: unknown[][][] } };
  for (const c of d.choices ?? []) for (const t of c.logprobs?.content ?? []) out.push(t.logprob, ...t.top_logprobs.map((x) => x.logprob));
  for (const t of d.meta_info?.output_token_logprobs ?? []) out.push(t[0]);
  for (const t of (d.meta_info?.output_top_logprobs ?? []).flat()) out.push(t[0]);
  return out;
}

function checkEnvelope(body: string): void {
  const e = (JSON.parse(body) as { error?: Record<string, unknown> }).error;
  if (!e || typeof e.message !== 'string' || !e.message || typeof e.type !== 'string') throw new Error('not the error envelope');
  if (!('param' in e) || !('code' in e)) throw new Error('the envelope lacks param or code');
}

async function send(c: Case): Promise<void> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const url = `${server.url}${c.path}`;
  const fail = (why: string, status?: number, text = '') => {
    throw new Error(`${why} (status ${status}, body ${JSON.stringify(text.slice(0, 300))})\nreplay: ${replayable(url, 'POST', headers, c.body)}`);
  };
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers, body: c.body, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (e) {
    return fail(`no answer: ${(e as Error).message}`);
  }
  const text = await res.text().catch((e: Error) => fail(`the body was cut: ${e.message}`, res.status));
  statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  if (!res.headers.get('x-request-id')) fail('no x-request-id', res.status, text);
  if (res.status >= 500) fail('a 5xx', res.status, text);
  if (res.status !== 200) {
    if (process.env.FUZZ_DEBUG) console.log(c.path, res.status, text.slice(0, 160));
    if (res.status < 400) fail('neither 200 nor 4xx', res.status, text);
    try {
      checkEnvelope(text);
    } catch (e) {
      fail((e as Error).message, res.status, text);
    }
    return;
  }
  const docs = res.headers.get('content-type')?.startsWith('text/event-stream')
    ? text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
    : [JSON.parse(text) as Record<string, unknown>];
  for (const d of docs) {
    const err = d.error as { type?: string; code?: string } | undefined;
    if (err && (err.type === 'server_error' || err.code === 'server_error')) fail('a server_error in the stream', res.status, text);
    for (const v of logprobsOf(d)) if (typeof v !== 'number' || !Number.isFinite(v)) fail(`a logprob that is not a finite number: ${String(v)}`, res.status, text);
  }
}

// ---------- the run ----------

describe('structured outputs fuzz against a real server', () => {
  it('answers every schema, regex and grammar with a 200 or a 4xx envelope, and never changes the canaries', async () => {
    // The canaries run beside the fuzz, over and over, and must answer as they did first.
    let running = true;
    const drift: string[] = [];
    const watch = (async () => {
      while (running) {
        const now = await askCanaries(server.url, key).catch((e: Error) => ({ error: e.message }));
        if (JSON.stringify(now) !== JSON.stringify(baseline)) drift.push(JSON.stringify(now).slice(0, 400));
      }
    })();
    try {
      await fc.assert(fc.asyncProperty(cases, send), fuzzParams(SEED, 1_500));
    } finally {
      running = false;
      await watch;
    }
    expect(drift, 'canaries answered differently while the fuzz ran').toEqual([]);
    expect(await askCanaries(server.url, key)).toEqual(baseline);
    // The engine worker never died: each model started once.
    expect(server.output().match(/"model starting"/g)).toHaveLength(2);
    expect(server.proc.exitCode).toBeNull();
  }, 240_000);
});
