// Property-based fuzzing (fast-check) of the HTTP surface of a real `hearth serve`
// process: wrong types for every field of every endpoint, random and malformed JSON,
// odd unicode, lying and duplicated headers, Content-Length mismatches, bodies at and
// over the limit, slow and aborted uploads, odd paths and methods. Every answer must be
// a 4xx (or 503) JSON envelope {error:{message,type,param,code}}, or a 200 for the
// rare valid request; never a 500, never a hang, never a crash (the server answers
// /health after every group), and its peak memory stays bounded. Every answer, raw ones
// included, carries an x-request-id; logprobs are finite numbers; CONNECT and TRACE are 405s;
// and the canaries (greedy chat, json_schema chat, /generate regex) answer the same before,
// between the groups and after.
//
// The seed is printed at the start (fixed in npm test; npm run fuzz draws fresh ones; FUZZ_SEED=<n> replays a run; FUZZ_SCALE=<x> multiplies
// the case counts), and a failing request is printed as a curl command (or, raw, as the bytes sent).

import * as fs from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { askCanaries } from '../helpers/canaries.js';
import { rawExchange as rawHttp, type Piece, type RawAnswer } from '../helpers/raw-http.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { fuzzParams, fuzzSeed, replayable } from './replay.js';

const MAX_BODY = 65_536;
const TIMEOUT_MS = 30_000; // per request: a hang fails the case
const SEED = fuzzSeed('http');
const params = (numRuns: number) => fuzzParams(SEED, numRuns);

let server: TestServer;
let key: string;
let port: number;
const counts: Record<string, number> = {};
const statuses: Record<string, number> = {};
let lastError = '';
let canaries: Record<string, unknown>;
/** The server's RSS every SAMPLE_EVERY cases (after the warm-up), to tell a steady growth from a jump. */
const SAMPLE_EVERY = 250;
const rssSamples: { cases: number; rssMb: number }[] = [];
let cases = 0;
const count = (group: string, status: number | string) => {
  counts[group] = (counts[group] ?? 0) + 1;
  statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
  if (group !== 'warmup' && ++cases % SAMPLE_EVERY === 0 && server.proc.exitCode === null) rssSamples.push({ cases, rssMb: memory(server.proc.pid!).rssMb });
};

function memory(pid: number): { rssMb: number; hwmMb: number } {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/** What the engine holds by design, from /metrics: the prefix cache (bounded by --kv-cache-mb) and its thread's off-heap memory. */
async function engineMemory(): Promise<string> {
  const text = await (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(TIMEOUT_MS) })).text();
  const sum = (name: string) => [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce((a, m) => a + Number(m[1]), 0) / 2 ** 20;
  return `prefix cache ${sum('hearth_kv_cache_bytes').toFixed(0)} MB, engine heap ${sum('hearth_engine_heap_bytes').toFixed(0)} MB, engine off-heap ${sum('hearth_engine_external_bytes').toFixed(0)} MB`;
}

// ---------- checking an answer ----------

function checkAnswer(what: string, status: number, contentType: string | null, body: string, method = 'POST'): void {
  const fail = (why: string) => {
    throw new Error(`${what}: ${why} (status ${status}, body ${JSON.stringify(body.slice(0, 300))})`);
  };
  if (status === 500 || status >= 500 && status !== 503) fail('a 5xx other than 503');
  if (status === 204 && method === 'OPTIONS') return;
  if (status === 200) {
    if (contentType?.startsWith('text/event-stream')) {
      if (!body.includes('data: ')) fail('an empty event stream');
      for (const line of body.split('\n')) if (line.startsWith('data: {')) checkLogprobs(JSON.parse(line.slice(6)), fail);
      return;
    }
    if (!contentType?.includes('application/json')) return; // /status (HTML), /metrics (Prometheus text)
    let doc: unknown;
    try {
      doc = JSON.parse(body);
    } catch {
      fail('a 200 whose body is not JSON');
    }
    checkLogprobs(doc, fail);
    return;
  }
  if (!(status >= 400 && status < 500) && status !== 503) fail('neither 200 nor a 4xx/503');
  if (!contentType?.includes('application/json')) fail(`an error with content-type ${contentType}`);
  let env: { error?: Record<string, unknown> };
  try {
    env = JSON.parse(body) as typeof env;
  } catch {
    return fail('an error body that is not JSON');
  }
  const e = env.error;
  if (!e || typeof e !== 'object') return fail('no error object');
  if (typeof e.message !== 'string' || !e.message) fail('error.message is not a non-empty string');
  if (typeof e.type !== 'string' || !e.type) fail('error.type is not a string');
  if (!('param' in e) || !(e.param === null || typeof e.param === 'string')) fail('error.param is not a string or null');
  if (!('code' in e) || !(e.code === null || typeof e.code === 'string')) fail('error.code is not a string or null');
}

/** Every logprob of a chat, completions or /generate answer (or stream chunk) is a finite number. */
function checkLogprobs(doc: unknown, fail: (why: string) => void): void {
  const d = doc as {
    choices?: { logprobs?: { content?: { logprob: unknown; top_logprobs: { logprob: unknown }[] }[]; token_logprobs?: unknown[]; top_logprobs?: Record<string, unknown>[] } | null }[];
    meta_info?: { output_token_logprobs?: unknown[][]; output_top_logprobs?: unknown[][][] };
  };
  const values: unknown[] = [];
  for (const c of Array.isArray(d?.choices) ? d.choices : []) {
    for (const t of c.logprobs?.content ?? []) values.push(t.logprob, ...t.top_logprobs.map((x) => x.logprob));
    values.push(...(c.logprobs?.token_logprobs ?? []), ...(c.logprobs?.top_logprobs ?? []).flatMap((o) => Object.values(o ?? {})));
  }
  // /generate: [logprob, token_id, text] triples, nested per prompt and per top alternative.
  const triples = (v: unknown): void => {
    if (!Array.isArray(v)) return;
    if (v.length === 3 && typeof v[1] === 'number' && typeof v[2] === 'string') values.push(v[0]);
    else v.forEach(triples);
  };
  triples(d?.meta_info?.output_token_logprobs);
  triples(d?.meta_info?.output_top_logprobs);
  for (const v of values) if (typeof v !== 'number' || !Number.isFinite(v)) fail(`a logprob that is not a finite number: ${String(v)}`);
}

async function send(group: string, method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array): Promise<number> {
  const url = `${server.url}${path}`;
  const replay = () => replayable(url, method, headers, body === undefined ? undefined : typeof body === 'string' ? body : Buffer.from(body).toString('latin1'));
  try {
    const res = await fetch(url, {
      method,
      headers,
      ...(body !== undefined ? { body: body as BodyInit } : {}),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    if (!res.headers.get('x-request-id')) throw new Error(`${group} ${method} ${path}: no x-request-id`);
    checkAnswer(`${group} ${method} ${path}`, res.status, res.headers.get('content-type'), text, method);
    count(group, res.status);
    lastError = res.status >= 400 ? text : '';
    return res.status;
  } catch (e) {
    throw new Error(`${(e as Error).message}\nreplay: ${replay()}`);
  }
}

// ---------- a raw HTTP/1.1 client (duplicate headers, lying lengths, slow and cut uploads) ----------

const rawExchange = (pieces: Piece[], opts: { abort?: boolean } = {}) => rawHttp(port, pieces, opts);

async function raw(group: string, pieces: Piece[], opts: { abort?: boolean; allowNoAnswer?: boolean; method?: string } = {}): Promise<RawAnswer[]> {
  // Raw requests replay as the bytes sent (pauses left out).
  const sent = () => JSON.stringify(pieces.filter((p) => typeof p !== 'object' || !('delayMs' in p)).map((p) => (typeof p === 'string' ? p : Buffer.from(p as Uint8Array).toString('latin1'))).join('').slice(0, 2_000));
  try {
    const answers = await rawExchange(pieces, opts);
    if (answers === 'aborted') {
      count(group, 'aborted');
      return [];
    }
    if (!answers.length && !opts.allowNoAnswer) throw new Error(`${group}: the server closed without answering`);
    for (const a of answers) {
      if (!a.headers['x-request-id']) throw new Error(`${group}: an answer ${a.status} without x-request-id`);
      checkAnswer(group, a.status, a.headers['content-type'] ?? null, a.body, opts.method);
      count(group, a.status);
    }
    if (!answers.length) count(group, 'closed');
    return answers;
  } catch (e) {
    throw new Error(`${(e as Error).message}\nreplay (raw bytes to port ${port}): ${sent()}`);
  }
}

const request = (method: string, path: string, headers: [string, string][], body: string | Uint8Array = ''): Piece[] => [
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` + headers.map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n',
  ...(body.length ? [body] : []),
];

/** The server is up, and the canaries answer as they did before the fuzz. */
async function healthy(): Promise<void> {
  const res = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  expect(res.status).toBe(200);
  expect(server.proc.exitCode).toBeNull();
  expect(await askCanaries(server.url, key)).toEqual(canaries);
}

// ---------- arbitraries ----------

const ODD = ['\u0000', '\ud800', '\udfff', '\udc00\ud800', '\u202e', '\u200f', '\u061c', '\ufeff', '\uffff', '\u2028', 'e\u0301', '💥', '\u{10ffff}', '\\', '"', '\r\n', '<script>', '%00', '${x}'];
/** Percent-encodes any string, lone surrogates included (as their UTF-8 replacement bytes). */
const pct = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0').toUpperCase()}`)).join('');
const oddUnicode = fc.array(fc.oneof(fc.constantFrom(...ODD), fc.string({ maxLength: 8 })), { maxLength: 12 }).map((xs) => xs.join(''));
const text = fc.oneof({ weight: 3, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 2, arbitrary: oddUnicode }, fc.constant(''));

const junk: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(0, -1, 1, 2, 3, 1e9, -1e9, 2 ** 31, 2 ** 53 + 2, 1e308, -0, 0.5, 1e-300, 2.0000001),
  fc.double({ noNaN: true }),
  text,
  fc.constantFrom('svc/tiny-chat', 'svc/tiny-embed', 'svc/nope', 'user', 'system', 'assistant', 'base64', 'float', 'true', '1'),
  fc.array(fc.oneof(fc.integer(), text, fc.constant(null)), { maxLength: 5 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(fc.integer(), text, fc.boolean()), { maxKeys: 4 }),
  fc.constant([]),
  fc.constant({}),
);

/** A field: a plausible valid value (mostly), junk, or absent. */
const field = (valid: fc.Arbitrary<unknown>) =>
  fc.oneof({ weight: 4, arbitrary: valid }, { weight: 2, arbitrary: junk }, { weight: 2, arbitrary: fc.constant(undefined) });

const smallInt = (min: number, max: number) => fc.integer({ min, max });
const stop = fc.oneof(text, fc.array(text, { maxLength: 5 }), fc.constant(null));
const message = fc.record(
  {
    role: field(fc.constantFrom('system', 'user', 'assistant', 'developer', 'tool')),
    content: field(fc.oneof(text, fc.constant([{ type: 'text', text: 'hi' }]), fc.constant([{ type: 'image_url', image_url: { url: 'x' } }]))),
    name: field(text),
  },
  { requiredKeys: [] },
);
const messages = fc.oneof({ weight: 4, arbitrary: fc.array(message, { minLength: 1, maxLength: 4 }) }, junk);
const extra = fc.dictionary(fc.string({ maxLength: 10 }), junk, { maxKeys: 2 });

const sampling = {
  max_tokens: field(smallInt(1, 12)),
  temperature: field(fc.double({ min: 0, max: 2, noNaN: true })),
  top_p: field(fc.double({ min: 0, max: 1, noNaN: true })),
  n: field(smallInt(1, 2)),
  stop: field(stop),
  seed: field(fc.integer()),
  presence_penalty: field(fc.double({ min: -2, max: 2, noNaN: true })),
  frequency_penalty: field(fc.double({ min: -2, max: 2, noNaN: true })),
  logprobs: field(fc.boolean()),
  user: field(text),
};

const ENDPOINTS: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  '/v1/chat/completions': fc.record(
    {
      model: field(fc.constant('svc/tiny-chat')),
      messages,
      ...sampling,
      max_completion_tokens: field(smallInt(1, 12)),
      top_logprobs: field(smallInt(0, 5)),
      stream: field(fc.boolean()),
      stream_options: field(fc.record({ include_usage: field(fc.boolean()) }, { requiredKeys: [] })),
    },
    { requiredKeys: [] },
  ),
  '/v1/completions': fc.record(
    {
      model: field(fc.constant('svc/tiny-chat')),
      prompt: field(fc.oneof(text, fc.array(text, { maxLength: 3 }), fc.array(smallInt(0, 300), { maxLength: 8 }))),
      ...sampling,
      logprobs: field(smallInt(0, 5)),
      echo: field(fc.boolean()),
      stream: field(fc.boolean()),
      suffix: field(text),
    },
    { requiredKeys: [] },
  ),
  '/v1/embeddings': fc.record(
    {
      model: field(fc.constant('svc/tiny-embed')),
      input: field(fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 4 }), fc.array(fc.array(smallInt(0, 300), { maxLength: 8 }), { maxLength: 2 }))),
      encoding_format: field(fc.constantFrom('float', 'base64')),
      dimensions: field(smallInt(1, 1536)),
      user: field(text),
    },
    { requiredKeys: [] },
  ),
  '/generate': fc.record(
    {
      model: field(fc.constant('svc/tiny-chat')),
      text: field(fc.oneof(text, fc.array(text, { minLength: 1, maxLength: 3 }))),
      input_ids: field(fc.array(smallInt(0, 300), { maxLength: 8 })),
      sampling_params: field(
        fc.record(
          {
            max_new_tokens: field(smallInt(0, 12)),
            temperature: field(fc.double({ min: 0, max: 2, noNaN: true })),
            top_p: field(fc.double({ min: 0, max: 1, noNaN: true })),
            top_k: field(smallInt(-1, 50)),
            min_p: field(fc.double({ min: 0, max: 1, noNaN: true })),
            stop: field(stop),
            stop_token_ids: field(fc.array(smallInt(0, 300), { maxLength: 3 })),
            n: field(smallInt(1, 2)),
            seed: field(fc.integer()),
            ignore_eos: field(fc.boolean()),
          },
          { requiredKeys: [] },
        ),
      ),
      return_logprob: field(fc.boolean()),
      top_logprobs_num: field(smallInt(0, 5)),
      stream: field(fc.boolean()),
    },
    { requiredKeys: [] },
  ),
};

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/octet-stream',
  '',
  'application/json, text/plain',
  'APPLICATION/JSON',
];

// ---------- the run ----------

describe('HTTP fuzz against a real server', () => {
  let before: { rssMb: number; hwmMb: number };
  let engineBefore = '';
  let started = 0;

  beforeAll(async () => {
    server = await startServer(['--models', 'svc/tiny-chat,svc/tiny-embed', '--max-body-bytes', String(MAX_BODY)]);
    port = Number(new URL(server.url).port);
    key = await createKey(server.dataDir, ['--name', 'fuzz', '--rate-limit', '100000000']);
    await waitReady(server.url);
    // Warm up (first inference, JIT) so the baseline is the serving state.
    for (let i = 0; i < 5; i++) {
      await send('warmup', 'POST', '/v1/chat/completions', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: `warm ${i}` }] }));
    }
    canaries = await askCanaries(server.url, key);
    before = memory(server.proc.pid!);
    engineBefore = await engineMemory();
    started = Date.now();
  });

  afterAll(async () => {
    if (!server) return;
    const after = server.proc.exitCode === null ? memory(server.proc.pid!) : undefined;
    const engineAfter = server.proc.exitCode === null ? await engineMemory().catch(() => '') : '';
    const total = Object.entries(counts).filter(([g]) => g !== 'warmup').reduce((a, [, n]) => a + n, 0);
    // Half-way: the sample nearest to half the cases; and about ten along the run.
    const half = rssSamples.reduce<(typeof rssSamples)[number] | undefined>((best, x) => (!best || Math.abs(x.cases - total / 2) < Math.abs(best.cases - total / 2) ? x : best), undefined);
    const step = Math.max(1, Math.round(rssSamples.length / 10));
    const series = rssSamples.filter((_, i) => i % step === step - 1).map((x) => `${x.cases}: ${x.rssMb.toFixed(0)}`);
    console.log(
      `fuzz: ${total} cases in ${((Date.now() - started) / 1000).toFixed(1)} s — ` +
        Object.entries(counts).map(([g, n]) => `${g} ${n}`).join(', ') +
        `\nfuzz: statuses ${JSON.stringify(statuses)}` +
        `\nfuzz: server RSS ${before?.rssMb.toFixed(0)} MB before, ${half ? `${half.rssMb.toFixed(0)} MB half-way (case ${half.cases}), ` : ''}${after?.rssMb.toFixed(0)} MB after; peak (VmHWM) ${before?.hwmMb.toFixed(0)} MB before, ${after?.hwmMb.toFixed(0)} MB after` +
        `\nfuzz: server RSS (MB) by case: ${series.join(', ')}` +
        `\nfuzz: before: ${engineBefore}; after: ${engineAfter}`,
    );
    const code = await server.stop();
    expect(code).toBe(0);
  });

  for (const [path, arb] of Object.entries(ENDPOINTS)) {
    it(`${path}: every field with valid, wrong-typed, odd or missing values`, async () => {
      await fc.assert(
        fc.asyncProperty(arb, extra, async (body, more) => {
          const status = await send(`fields ${path}`, 'POST', path, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, JSON.stringify({ ...body, ...more }));
          if (status === 429) throw new Error('rate limited: the fuzz key should not be');
        }),
        params(600),
      );
      await healthy();
    }, 240_000);
  }

  it('valid requests with odd text reach the engine and get well-formed answers', async () => {
    const prompt = fc.oneof(oddUnicode, fc.string({ minLength: 1, maxLength: 40 }));
    const temperature = fc.oneof(fc.constant(0), fc.double({ min: 0, max: 2, noNaN: true }));
    const stops = fc.option(fc.array(prompt, { minLength: 1, maxLength: 4 }), { nil: undefined });
    const valid = fc.oneof(
      fc.record({
        path: fc.constant('/v1/chat/completions'),
        body: fc.record({
          model: fc.constant('svc/tiny-chat'),
          messages: fc.array(fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: prompt }), { minLength: 1, maxLength: 3 }),
          max_tokens: smallInt(1, 8),
          temperature,
          stop: stops,
          n: smallInt(1, 2),
          seed: fc.integer(),
          logprobs: fc.boolean(),
          top_logprobs: fc.option(smallInt(0, 20), { nil: undefined }),
          frequency_penalty: fc.option(fc.double({ min: -2, max: 2, noNaN: true }), { nil: undefined }),
          response_format: fc.option(fc.constant({ type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] } } }), { nil: undefined }),
          stream: fc.boolean(),
        }),
      }),
      fc.record({
        path: fc.constant('/v1/completions'),
        body: fc.record({
          model: fc.constant('svc/tiny-chat'),
          prompt: fc.oneof(prompt, fc.array(prompt, { minLength: 1, maxLength: 3 })),
          max_tokens: smallInt(1, 8),
          temperature,
          echo: fc.boolean(),
          logprobs: smallInt(0, 5),
          stream: fc.boolean(),
        }),
      }),
      fc.record({
        path: fc.constant('/v1/embeddings'),
        body: fc.record({
          model: fc.constant('svc/tiny-embed'),
          input: fc.oneof(prompt, fc.array(prompt, { minLength: 1, maxLength: 3 })),
          encoding_format: fc.constantFrom('float', 'base64'),
          dimensions: smallInt(1, 1536),
        }),
      }),
      fc.record({
        path: fc.constant('/generate'),
        body: fc.record({
          text: fc.oneof(prompt, fc.array(prompt, { minLength: 1, maxLength: 3 })),
          sampling_params: fc.record({ max_new_tokens: smallInt(1, 8), temperature, top_k: smallInt(-1, 20), min_p: fc.double({ min: 0, max: 1, noNaN: true }), stop: stops }),
          return_logprob: fc.boolean(),
          stream: fc.boolean(),
        }),
      }),
    );
    let ok = 0;
    let all = 0;
    const refusals: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(valid, async ({ path, body }) => {
        const status = await send('valid', 'POST', path, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, JSON.stringify(body));
        all++;
        if (status === 200) ok++;
        else if (status !== 400) throw new Error(`a valid ${path} request got ${status}`);
        else {
          const e = (JSON.parse(lastError) as { error: { code: string; param: string | null } }).error;
          refusals[`${e.code}(${e.param})`] = (refusals[`${e.code}(${e.param})`] ?? 0) + 1;
        }
      }),
      params(400),
    );
    console.log(`fuzz: valid requests with odd text: ${ok} of ${all} answered 200; 400s: ${JSON.stringify(refusals)}`);
    expect(ok).toBeGreaterThan(all / 2);
    await healthy();
  }, 240_000);

  it('random and malformed JSON bodies, lying content types', async () => {
    const endpoint = fc.constantFrom(...Object.keys(ENDPOINTS));
    const payload = fc.oneof(
      fc.string({ maxLength: 200 }),
      oddUnicode,
      fc.json({ maxDepth: 4 }),
      fc.json({ maxDepth: 4 }).chain((j) => fc.nat({ max: Math.max(0, j.length - 1) }).map((n) => j.slice(0, n))), // truncated
      fc.tuple(fc.json({ maxDepth: 3 }), fc.nat(), fc.constantFrom('{', '}', '"', ',', ':', '\\', '\u0000', '\ud800')).map(([j, n, c]) => j.slice(0, n % (j.length + 1)) + c + j.slice(n % (j.length + 1))),
      fc.uint8Array({ maxLength: 200 }), // arbitrary bytes, invalid UTF-8 among them
      fc.constantFrom(
        '',
        'null',
        '[]',
        '1e999',
        '"\\ud800"',
        '{"model":"svc/tiny-chat","model":1}',
        '\ufeff{"model":"svc/tiny-chat","messages":[]}',
        '{"__proto__":{"admin":true},"model":"svc/tiny-chat","messages":[{"role":"user","content":"x"}],"max_tokens":2}',
        '{"constructor":{"prototype":{"x":1}}}',
        '[' .repeat(5000) + ']'.repeat(5000),
        '{"a":'.repeat(3000) + '1' + '}'.repeat(3000),
        '{"model":"svc/tiny-chat","messages":[{"role":"user","content":"\\u0000\\ud800\\u202e"}],"max_tokens":3}',
      ),
    );
    await fc.assert(
      fc.asyncProperty(endpoint, payload, fc.constantFrom(...CONTENT_TYPES), async (path, body, ct) => {
        const headers: Record<string, string> = { authorization: `Bearer ${key}` };
        if (ct) headers['content-type'] = ct;
        await send('json', 'POST', path, headers, body);
      }),
      params(1000),
    );
    await healthy();
  }, 240_000);

  it('values nested deep in the fields handed on as they are: a 400, never a 500', async () => {
    const deep = (n: number) => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
    const bodies: Record<string, (n: number) => string> = {
      arguments: (n) =>
        `{"model":"svc/tiny-chat","max_tokens":2,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":${JSON.stringify(deep(n))}}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
      chat_template_kwargs: (n) => `{"model":"svc/tiny-chat","max_tokens":2,"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"x":${deep(n)}}}`,
      parameters: (n) => `{"model":"svc/tiny-chat","max_tokens":2,"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":${deep(n)}}}}}]}`,
      response_format: (n) => `{"model":"svc/tiny-chat","max_tokens":2,"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":${deep(n)}}}}`,
      json_schema: (n) => JSON.stringify({ text: 'hi', sampling_params: { max_new_tokens: 2, json_schema: deep(n) } }),
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(bodies)), fc.oneof(fc.integer({ min: 1, max: 80 }), fc.constantFrom(3_000, 5_000, 20_000)), async (field, depth) => {
        const path = field === 'json_schema' ? '/generate' : '/v1/chat/completions';
        const status = await send('deep', 'POST', path, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, bodies[field]!(depth));
        // 413 where the body is over this server's limit.
        if (depth > 64 && status !== 400 && status !== 413) throw new Error(`${field} nested ${depth} deep: ${status}, not 400`);
      }),
      params(150),
    );
    await healthy();
  }, 240_000);

  it('Authorization variants, duplicated and lying headers (raw sockets)', async () => {
    const body = JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
    const near = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    const auth = fc.oneof(
      fc.constantFrom(
        [],
        [['Authorization', '']],
        [['Authorization', 'Bearer']],
        [['Authorization', 'Bearer ']],
        [['Authorization', `Bearer  ${key}`]],
        [['Authorization', `bearer ${key}`]],
        [['Authorization', `BEARER ${key}`]],
        [['Authorization', `Bearer ${key} extra`]],
        [['Authorization', `Bearer ${near}`]],
        [['Authorization', `Bearer ${key}x`]],
        [['Authorization', `Bearer ${key.slice(0, 20)}`]],
        [['Authorization', key]],
        [['Authorization', `Basic ${Buffer.from(`u:${key}`).toString('base64')}`]],
        [['Authorization', `Bearer ${key}`], ['Authorization', `Bearer ${near}`]],
        [['Authorization', `Bearer ${near}`], ['Authorization', `Bearer ${key}`]],
        [['Authorization', `Bearer ${key}`], ['Authorization', `Bearer ${key}`]],
        [['Authorization', `Bearer ${'x'.repeat(7000)}`]],
        [['authorization', `Bearer ${key}`], ['X-Api-Key', key]],
      ),
      fc.string({ maxLength: 60 }).map((s) => [['Authorization', `Bearer ${s.replace(/[\r\n]/g, '')}`]]),
      oddUnicode.map((s) => [['Authorization', `Bearer ${key}${s.replace(/[\r\n]/g, '')}`]]),
    ) as fc.Arbitrary<[string, string][]>;
    const bodyBytes = Buffer.byteLength(body);
    const length = fc.constantFrom<[string, string][]>(
      [['Content-Length', String(bodyBytes)]],
      [['Content-Length', String(bodyBytes)], ['Content-Length', String(bodyBytes)]],
      [['Content-Length', String(bodyBytes)], ['Content-Length', String(bodyBytes + 1)]],
      [['Content-Length', String(bodyBytes - 5)]], // shorter: the rest reads as a second request
      [['Content-Length', '-1']],
      [['Content-Length', 'abc']],
      [['Content-Length', ` ${bodyBytes} `]],
      [['Content-Length', '99999999999999999999']],
      [['Content-Length', String(bodyBytes)], ['Transfer-Encoding', 'chunked']],
      [['Transfer-Encoding', 'gzip']],
      [['Transfer-Encoding', 'chunked, chunked']],
    );
    const types = fc.oneof(
      fc.constantFrom(...CONTENT_TYPES).map((t) => (t ? [['Content-Type', t]] : [])),
      fc.constant([['Content-Type', 'application/json'], ['Content-Type', 'text/plain']]),
    ) as fc.Arbitrary<[string, string][]>;
    const others = fc.subarray<[string, string]>([
      ['Expect', '100-continue'],
      ['X-Request-Id', 'fuzz-1'],
      ['X-Request-Id', '../../etc/passwd'],
      ['Accept', 'text/event-stream'],
      ['Accept-Encoding', 'gzip, br'],
      ['Connection', 'keep-alive'],
      ['Origin', 'null'],
      ['X-Forwarded-For', '1.2.3.4, ::1'],
    ]);
    await fc.assert(
      fc.asyncProperty(auth, length, types, others, async (a, l, t, o) => {
        await raw('headers', request('POST', '/v1/chat/completions', [...a, ...l, ...t, ...o], body), { allowNoAnswer: false });
      }),
      params(700),
    );
    await healthy();
  }, 240_000);

  it('bodies at and over the limit, with a length, chunked, and lying', async () => {
    const auth: [string, string] = ['Authorization', `Bearer ${key}`];
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -64, max: 64 }), fc.constantFrom('length', 'chunked', 'fetch'), fc.constantFrom('/v1/embeddings', '/v1/chat/completions', '/generate'), async (delta, how, path) => {
        const prefix = '{"model":"svc/tiny-embed","input":"';
        const size = MAX_BODY + delta;
        const body = prefix + 'a'.repeat(Math.max(0, size - prefix.length - 2)) + '"}';
        if (how === 'fetch') {
          const status = await send('size', 'POST', path, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body);
          if (size > MAX_BODY && status !== 413) throw new Error(`a ${size}-byte body got ${status}, not 413`);
          return;
        }
        if (how === 'length') {
          await raw('size', request('POST', path, [auth, ['Content-Type', 'application/json'], ['Content-Length', String(Buffer.byteLength(body))]], body));
          return;
        }
        const chunked: Piece[] = [`POST ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`];
        for (let i = 0; i < body.length; i += 8192) {
          const part = body.slice(i, i + 8192);
          chunked.push(`${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`);
        }
        chunked.push('0\r\n\r\n');
        await raw('size', chunked);
      }),
      params(80),
    );
    // Far over the limit: a declared 1 GB body is refused without being read.
    await raw('size', request('POST', '/v1/chat/completions', [auth, ['Content-Type', 'application/json'], ['Content-Length', String(1 << 30)]], '{"x":'), { allowNoAnswer: true });
    await healthy();
  }, 240_000);

  it('slow uploads are answered; aborted uploads leave the server serving', async () => {
    const body = JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'slowly' }], max_tokens: 3 });
    const head = (len: number) => `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${len}\r\n\r\n`;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 6 }), fc.integer({ min: 5, max: 60 }), async (pieces, delayMs) => {
        const parts: Piece[] = [head(Buffer.byteLength(body))];
        const step = Math.ceil(body.length / pieces);
        for (let i = 0; i < body.length; i += step) parts.push({ delayMs }, body.slice(i, i + step));
        await raw('slow', parts);
      }),
      params(12),
    );
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: body.length - 1 }), fc.integer({ min: 0, max: 30 }), fc.boolean(), async (cut, delayMs, declared) => {
        const parts: Piece[] = declared
          ? [head(Buffer.byteLength(body)), body.slice(0, cut), { delayMs }]
          : [`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nTransfer-Encoding: chunked\r\n\r\n${cut.toString(16)}\r\n${body.slice(0, cut)}`, { delayMs }];
        await raw('aborted', parts, { abort: true });
      }),
      params(100),
    );
    await healthy();
  }, 240_000);

  it('odd paths, methods and query strings', async () => {
    const segment = fc.oneof(
      fc.constantFrom('v1', 'models', 'chat', 'completions', 'embeddings', 'generate', 'health', 'status', 'admin', 'metrics', '..', '.', '%2F', '%00', '%ZZ', 'svc%2Ftiny-chat', 'svc', 'tiny-chat'),
      fc.string({ maxLength: 12 }).map(pct),
      oddUnicode.map(pct),
    );
    const path = fc.tuple(fc.array(segment, { minLength: 1, maxLength: 5 }), fc.option(fc.oneof(fc.string({ maxLength: 30 }), oddUnicode).map(pct))).map(
      ([segs, q]) => '/' + segs.join('/') + (q ? `?${q}` : ''),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'), path, fc.boolean(), async (method, p, withKey) => {
        const headers: Record<string, string> = withKey ? { authorization: `Bearer ${key}` } : {};
        const body = method === 'GET' || method === 'OPTIONS' ? undefined : '{}';
        if (body) headers['content-type'] = 'application/json';
        await send('paths', method, p, headers, body);
      }),
      params(500),
    );
    // A request line far longer than Node accepts.
    await raw('paths', request('GET', '/v1/models?' + 'q'.repeat(20_000), [['Authorization', `Bearer ${key}`]]));
    await raw('paths', ['GARBAGE\r\n\r\n']);
    await raw('paths', ['GET /v1/models HTTP/9.9\r\n\r\n']);
    await healthy();
  }, 240_000);

  it('odd methods, Host headers and request targets (raw sockets): CONNECT and TRACE are 405s', async () => {
    const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT', 'PROPFIND', 'MKCOL', 'PURGE');
    const target = fc.oneof(
      fc.array(fc.constantFrom('v1', 'models', 'svc', 'tiny-chat', 'chat', 'completions', 'generate', 'health', 'admin', '..', '.', '%2F', '%5C', '\\', '%2e%2e', '%00', '', 'svc%2Ftiny-chat', 'svc\\tiny-chat'), { minLength: 1, maxLength: 5 }).map((xs) => '/' + xs.join('/')),
      fc.constantFrom('*', 'example.com:443', '127.0.0.1:80', 'http://127.0.0.1/health', 'http://evil.example/v1/models', '/health?x=\\', '/v1/models?%ZZ', '//v1//models'),
    );
    const host = fc.constantFrom<string | null>('127.0.0.1', null, 'a b', '[::1', 'x:99999', '', 'evil.example', 'user@host', '..', 'exa\tmple', '127.0.0.1:1');
    const accept = fc.constantFrom<string | null>(null, 'application/xml', 'text/event-stream', '*/*');
    await fc.assert(
      fc.asyncProperty(method, target, host, accept, fc.boolean(), async (m, t, h, a, withKey) => {
        const headers = [...(h === null ? [] : [`Host: ${h}`]), ...(a ? [`Accept: ${a}`] : []), ...(withKey ? [`Authorization: Bearer ${key}`] : []), 'Connection: close'];
        const body = m === 'POST' || m === 'PUT' || m === 'PATCH' ? '{}' : '';
        if (body) headers.push('Content-Type: application/json', `Content-Length: ${body.length}`);
        const answers = await raw('methods', [`${m} ${t} HTTP/1.1\r\n${headers.map((x) => `${x}\r\n`).join('')}\r\n${body}`], { method: m });
        // 405 for the method; a 400 where the target or Host is refused before the method is looked at.
        if (m === 'CONNECT' || m === 'TRACE') for (const ans of answers) if (ans.status !== 405 && ans.status !== 400) throw new Error(`${m} ${t}: ${ans.status}, not 405`);
      }),
      params(400),
    );
    await healthy();
  }, 240_000);

  it('memory stays bounded', async () => {
    const after = memory(server.proc.pid!);
    expect(after.hwmMb).toBeLessThan(1536);
    // No runaway growth: the resident set after the whole run stays within 512 MB of the warmed-up baseline.
    expect(after.rssMb - before.rssMb).toBeLessThan(512);
    await healthy();
  });
});
