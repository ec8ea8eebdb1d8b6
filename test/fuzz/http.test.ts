// Property-based fuzzing (fast-check) of the HTTP surface of a real `hearth serve`
// process: wrong types for every field of every endpoint, random and malformed JSON,
// odd unicode, lying and duplicated headers, Content-Length mismatches, bodies at and
// over the limit, slow and aborted uploads, odd paths and methods. Every answer must be
// a 4xx (or 503) JSON envelope {error:{message,type,param,code}}, or a 200 for the
// rare valid request; never a 500, never a hang, never a crash (the server answers
// /health after every group), and its peak memory stays bounded.
//
// FUZZ_SEED=<n> replays a run; FUZZ_SCALE=<x> multiplies the case counts.

import * as fs from 'node:fs';
import * as net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const MAX_BODY = 65_536;
const TIMEOUT_MS = 30_000; // per request: a hang fails the case
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : undefined;
const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const params = (numRuns: number): fc.Parameters<unknown> => ({ numRuns: runs(numRuns), ...(SEED !== undefined ? { seed: SEED } : {}) });

let server: TestServer;
let key: string;
let port: number;
const counts: Record<string, number> = {};
const statuses: Record<string, number> = {};
let lastError = '';
const count = (group: string, status: number | string) => {
  counts[group] = (counts[group] ?? 0) + 1;
  statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
};

function memory(pid: number): { rssMb: number; hwmMb: number } {
  const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
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
      return;
    }
    if (!contentType?.includes('application/json')) return; // /status (HTML), /metrics (Prometheus text)
    try {
      JSON.parse(body);
    } catch {
      fail('a 200 whose body is not JSON');
    }
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

async function send(group: string, method: string, path: string, headers: Record<string, string>, body?: string | Uint8Array): Promise<number> {
  const res = await fetch(`${server.url}${path}`, {
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
}

// ---------- a raw HTTP/1.1 client (duplicate headers, lying lengths, slow and cut uploads) ----------

type Piece = string | Uint8Array | { delayMs: number };

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes the pieces, then reads until the server closes. `abort`: destroy the socket
 * after writing (an aborted upload), expecting nothing. */
function rawExchange(pieces: Piece[], opts: { abort?: boolean } = {}): Promise<RawAnswer[] | 'aborted'> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      sock.destroy();
      reject(new Error(`raw request hung for ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', () => {}); // a reset after the answer is fine; judged on close
    sock.on('close', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (opts.abort) return resolve('aborted');
      try {
        resolve(parseAnswers(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
    sock.on('connect', async () => {
      for (const p of pieces) {
        if (sock.destroyed) return;
        if (typeof p === 'object' && 'delayMs' in p) await new Promise((r) => setTimeout(r, p.delayMs));
        else sock.write(p);
      }
      if (opts.abort) sock.destroy();
    });
  });
}

function parseAnswers(buf: Buffer): RawAnswer[] {
  const out: RawAnswer[] = [];
  let at = 0;
  while (at < buf.length) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`a truncated answer: ${JSON.stringify(buf.subarray(at, at + 200).toString())}`);
    const head = buf.subarray(at, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0]!);
    if (!m) throw new Error(`not an HTTP answer: ${JSON.stringify(head[0])}`);
    if (m[1]!.startsWith('1')) {
      at = end + 4; // an interim answer (100 Continue): no body
      continue;
    }
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const c = line.indexOf(':');
      headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
    }
    let p = end + 4;
    let body: Buffer;
    if (headers['transfer-encoding']?.includes('chunked')) {
      const parts: Buffer[] = [];
      for (;;) {
        const le = buf.indexOf('\r\n', p);
        if (le < 0) break;
        const size = parseInt(buf.subarray(p, le).toString(), 16);
        p = le + 2;
        if (!size) {
          p += 2;
          break;
        }
        parts.push(buf.subarray(p, p + size));
        p += size + 2;
      }
      body = Buffer.concat(parts);
    } else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      body = buf.subarray(p, p + n);
      p += n;
    } else {
      body = buf.subarray(p);
      p = buf.length;
    }
    out.push({ status: Number(m[1]), headers, body: body.toString('utf8') });
    at = p;
  }
  return out;
}

async function raw(group: string, pieces: Piece[], opts: { abort?: boolean; allowNoAnswer?: boolean } = {}): Promise<void> {
  const answers = await rawExchange(pieces, opts);
  if (answers === 'aborted') return void count(group, 'aborted');
  if (!answers.length && !opts.allowNoAnswer) throw new Error(`${group}: the server closed without answering`);
  for (const a of answers) {
    checkAnswer(group, a.status, a.headers['content-type'] ?? null, a.body);
    count(group, a.status);
  }
  if (!answers.length) count(group, 'closed');
}

const request = (method: string, path: string, headers: [string, string][], body: string | Uint8Array = ''): Piece[] => [
  `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` + headers.map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n',
  ...(body.length ? [body] : []),
];

async function healthy(): Promise<void> {
  const res = await fetch(`${server.url}/health`, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  expect(res.status).toBe(200);
  expect(server.proc.exitCode).toBeNull();
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
    before = memory(server.proc.pid!);
    started = Date.now();
  });

  afterAll(async () => {
    if (!server) return;
    const after = server.proc.exitCode === null ? memory(server.proc.pid!) : undefined;
    const total = Object.entries(counts).filter(([g]) => g !== 'warmup').reduce((a, [, n]) => a + n, 0);
    console.log(
      `fuzz: ${total} cases in ${((Date.now() - started) / 1000).toFixed(1)} s — ` +
        Object.entries(counts).map(([g, n]) => `${g} ${n}`).join(', ') +
        `\nfuzz: statuses ${JSON.stringify(statuses)}` +
        `\nfuzz: server RSS ${before?.rssMb.toFixed(0)} MB before, ${after?.rssMb.toFixed(0)} MB after; peak (VmHWM) ${before?.hwmMb.toFixed(0)} MB before, ${after?.hwmMb.toFixed(0)} MB after`,
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

  it('memory stays bounded', async () => {
    const after = memory(server.proc.pid!);
    expect(after.hwmMb).toBeLessThan(1536);
    // No runaway growth: the resident set after the whole run stays within 512 MB of the warmed-up baseline.
    expect(after.rssMb - before.rssMb).toBeLessThan(512);
    await healthy();
  });
});
