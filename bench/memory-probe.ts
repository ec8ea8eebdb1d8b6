// npx tsx bench/memory-probe.ts: where a `hearth serve` process's memory goes under the
// kinds of traffic the HTTP fuzz sends (issue 26, item 6). It starts a server on the fixtures
// with the inspector on (NODE_OPTIONS=--inspect=127.0.0.1:0, set only while the server starts),
// sends the traffic in phases (refused bodies, small generations, streams cut by the client,
// distinct structured outputs, grammars XGrammar or the limits refuse, embeddings), each phase
// twice, and after each pass records (bench/memory-inspect.ts):
//   - RSS (VmRSS), and by kind of mapping from /proc/PID/smaps: WASM memories, glibc malloc
//     arenas, the brk heap, files, other anonymous memory (V8's heaps among it);
//   - per thread (main, engine worker, grammar-trial workers), through the inspector: the JS
//     heap in use after a full GC, the memory off the heap (ArrayBuffers, WASM memories), and
//     the WebAssembly.Memory objects alive (XGrammar's heaps);
//   - the prefix cache's bytes (hearth_kv_cache_bytes), which fill up to --kv-cache-mb by design.
// A phase that grows as much on its second pass as on its first keeps something per request
// (a leak); one that grows once reaches a high-water mark.
//
// PROBE_PHASES=a,b picks phases (default all, in order); PROBE_PASSES (default 2) repeats each.
// PROBE_SCALE (default 1) multiplies the requests of every phase; PROBE_ARGS adds
// `hearth serve` arguments (--kv-cache-mb 0, for instance); PROBE_ENV='A=1 B=2' adds environment
// variables to the server (MALLOC_ARENA_MAX=2, for instance). PROBE_OUT=<file> writes the rows as JSON.
import { writeFileSync } from 'node:fs';
import { writeFixtures } from '../models/index.js';
import { createKey, startServer, waitReady, type TestServer } from '../test/helpers/server.js';
import { connectInspector, describe, snapshot, type Snapshot, type Thread } from './memory-inspect.js';

const SCALE = Number(process.env.PROBE_SCALE ?? 1);
const CONCURRENCY = 4;
const PASSES = Number(process.env.PROBE_PASSES ?? 2);
const n = (x: number) => Math.max(1, Math.round(x * SCALE));

// ---------- traffic ----------

let server: TestServer;
let key: string;
const statuses: Record<string, number> = {};

async function post(path: string, body: string | object, opts: { headers?: Record<string, string>; cutAfterFirstChunk?: boolean } = {}): Promise<void> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 60_000);
  try {
    const res = await fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...opts.headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      signal: ctl.signal,
    });
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status >= 500) console.error(`  ${res.status} on ${path}: ${(await res.text()).slice(0, 200)}`);
    else if (opts.cutAfterFirstChunk && res.body) {
      const reader = res.body.getReader();
      await reader.read();
      ctl.abort();
      await reader.cancel().catch(() => undefined);
    } else await res.arrayBuffer();
  } catch (e) {
    if (!opts.cutAfterFirstChunk) statuses[`error ${(e as Error).name}`] = (statuses[`error ${(e as Error).name}`] ?? 0) + 1;
  } finally {
    clearTimeout(timer);
  }
}

async function pool(count: number, one: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) await one(next++);
    }),
  );
}

const words = ['sea', 'stone', 'river', 'light', 'garden', 'winter', 'market', 'window', '💥', 'e\u0301', '\u202e'];
const say = (i: number) => `Request ${i}: tell me about the ${words[i % words.length]} and the ${words[(i * 7) % words.length]}.`;
let uniq = 0; // distinct across passes, so that a second pass does not hit caches the first filled

const PHASES: Record<string, (pass: number) => Promise<void>> = {
  /** Bodies the router refuses before the engine: bad JSON, wrong types, unknown models, bad keys. */
  invalid: () =>
    pool(n(1500), async (i) => {
      const u = uniq++;
      switch (i % 6) {
        case 0:
          return post('/v1/chat/completions', `{"model":"svc/tiny-chat","messages":[{"role":"user","content":"x${u}"`);
        case 1:
          return post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: `m${u}`, max_tokens: -u });
        case 2:
          return post('/v1/completions', { model: `svc/nope-${u}`, prompt: 'x' });
        case 3:
          return post('/v1/embeddings', { model: 'svc/tiny-embed', input: [[u, -1, 'x']] });
        case 4:
          return post('/generate', { text: `t${u}`, sampling_params: { temperature: -u, top_k: 'x' } });
        default:
          return post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [] }, { headers: { authorization: `Bearer svc_live_${'x'.repeat(32)}${u}` } });
      }
    }),
  /** Small generations, streamed and not, on every generating endpoint. */
  generate: () =>
    pool(n(300), async (i) => {
      const u = uniq++;
      const stream = i % 2 === 0;
      switch (i % 3) {
        case 0:
          return post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: say(u) }], max_tokens: 1 + (u % 12), stream, logprobs: true, top_logprobs: 3, seed: u });
        case 1:
          return post('/v1/completions', { model: 'svc/tiny-chat', prompt: say(u), max_tokens: 1 + (u % 12), stream, logprobs: 2, echo: u % 4 === 1 });
        default:
          return post('/generate', { text: [say(u), say(u + 1)], sampling_params: { max_new_tokens: 1 + (u % 12), temperature: 1, n: 1 + (u % 2), seed: u }, return_logprob: true, stream });
      }
    }),
  /** Streams the client closes after the first chunk, the generation still running. */
  cut: () =>
    pool(n(200), async (i) => {
      const u = uniq++;
      const path = i % 2 ? '/v1/chat/completions' : '/generate';
      const body = i % 2 ? { model: 'svc/tiny-chat', messages: [{ role: 'user', content: say(u) }], max_tokens: 64, stream: true } : { text: say(u), sampling_params: { max_new_tokens: 64, ignore_eos: true }, stream: true };
      return post(path, body, { cutAfterFirstChunk: true });
    }),
  /** Structured outputs, each schema or regex distinct (more than the 64 grammars a model keeps). */
  structured: () =>
    pool(n(200), async (i) => {
      const u = uniq++;
      if (i % 2) {
        const schema = { type: 'object', properties: { [`k${u}`]: { type: 'integer' }, name: { type: 'string', maxLength: 1 + (u % 30) }, tags: { type: 'array', items: { enum: [`a${u}`, `b${u}`] } } }, required: [`k${u}`, 'name'] };
        return post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: say(u) }], max_tokens: 24, temperature: 0, response_format: { type: 'json_schema', json_schema: { name: `s${u}`, schema } } });
      }
      return post('/generate', { text: say(u), sampling_params: { max_new_tokens: 12, temperature: 0, regex: `[A-Z]{3}-[0-9]{${1 + (u % 5)},${6 + (u % 97)}}x${u}` } });
    }),
  /** Grammars XGrammar itself refuses (each retires the XGrammar instance of the trial worker that tried it, which loads a fresh one), and schemas the limits refuse. */
  badGrammar: () =>
    pool(n(100), async (i) => {
      const u = uniq++;
      switch (i % 4) {
        case 0:
          return post('/generate', { text: 'x', sampling_params: { max_new_tokens: 2, ebnf: `root ::= ( "x${u}"` } });
        case 1:
          return post('/generate', { text: 'x', sampling_params: { max_new_tokens: 2, ebnf: `root ::= undefined${u}` } });
        case 2:
          return post('/generate', { text: 'x', sampling_params: { max_new_tokens: 2, regex: `[z-a]${u}` } });
        default:
          return post('/generate', { text: 'x', sampling_params: { max_new_tokens: 2, json_schema: '{"a":'.repeat(40 + (u % 3000)) + '1' + '}'.repeat(40 + (u % 3000)) } });
      }
    }),
  /** Embeddings of one to four inputs, float and base64, with and without dimensions. */
  embed: () =>
    pool(n(300), async (i) => {
      const u = uniq++;
      return post('/v1/embeddings', { model: 'svc/tiny-embed', input: Array.from({ length: 1 + (i % 4) }, (_, k) => say(u * 4 + k)), encoding_format: i % 2 ? 'base64' : 'float', ...(i % 3 ? { dimensions: 1 + (u % 1536) } : {}) });
    }),
};

// ---------- the run ----------

interface Row extends Snapshot {
  phase: string;
  seconds: number;
}

await writeFixtures({ ifMissing: true });
const extraEnv = Object.fromEntries((process.env.PROBE_ENV ?? '').split(/\s+/).filter(Boolean).map((kv) => kv.split('=') as [string, string]));
const saved = { ...process.env };
Object.assign(process.env, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:0`.trim() }, extraEnv);
const keyDir = await import('node:fs/promises').then((fs) => fs.mkdtemp('/tmp/hearth-probe-'));
server = await startServer(['--models', 'svc/tiny-chat,svc/tiny-embed', '--max-body-bytes', '65536', '--log-level', 'warn', ...(process.env.PROBE_ARGS ?? '').split(/\s+/).filter(Boolean)], keyDir);
process.env = saved;
key = await createKey(server.dataDir, ['--name', 'probe', '--rate-limit', '100000000']);
await waitReady(server.url);
const inspector = await connectInspector(server.output());
const pid = server.proc.pid!;

async function measure(phase: string, seconds: number): Promise<Row> {
  await new Promise((r) => setTimeout(r, 300));
  const row = { phase, seconds, ...(await snapshot(pid, server.url, inspector)) };
  console.log(`${phase.padEnd(14)} ${seconds.toFixed(0).padStart(4)} s  ${describe(row)}`);
  return row;
}

// Warm-up, as the fuzz does before its baseline.
for (let i = 0; i < 5; i++) await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: `warm ${i}` }] });
const rows: Row[] = [await measure('start', 0)];
const order = (process.env.PROBE_PHASES ?? Object.keys(PHASES).join(',')).split(',');
for (const name of order) {
  for (let pass = 1; pass <= PASSES; pass++) {
    const t0 = Date.now();
    await PHASES[name]!(pass);
    rows.push(await measure(`${name} #${pass}`, (Date.now() - t0) / 1000));
  }
}
console.log(`statuses ${JSON.stringify(statuses)}`);
const sumOf = (r: Row, prefix: string, k: keyof Thread) => Object.entries(r.threads).filter(([t]) => t.startsWith(prefix)).reduce((a, [, v]) => a + v[k], 0);
console.log('\nMiB; Δ from the row before. wasm, arenas, brk, anon, files: RSS by kind of mapping; heap: JS heap after GC; ext: off the JS heap (ArrayBuffers, WASM); WASM alive: memories (count=MiB) in engine + trial workers');
console.log('phase            RSS   ΔRSS  Δwasm Δarenas  Δbrk Δanon Δfiles  Δheap main engine trials  Δext engine  Δprefix cache  WASM alive');
for (let i = 1; i < rows.length; i++) {
  const a = rows[i - 1]!;
  const b = rows[i]!;
  const d = (x: number, w = 6) => ((x >= 0 ? '+' : '') + x.toFixed(0)).padStart(w);
  const dh = (k: string) => ((x) => (x >= 0 ? '+' : '') + x.toFixed(1))(sumOf(b, k, 'heapMb') - sumOf(a, k, 'heapMb')).padStart(6);
  const alive = `${sumOf(b, 'engine', 'wasmCount') + sumOf(b, 'trial', 'wasmCount')}=${(sumOf(b, 'engine', 'wasmMb') + sumOf(b, 'trial', 'wasmMb')).toFixed(0)}`;
  console.log(
    `${b.phase.padEnd(14)} ${b.rssMb.toFixed(0).padStart(5)} ${d(b.rssMb - a.rssMb)} ${d(b.smaps.wasm! - a.smaps.wasm!)} ${d(b.smaps.arenas! - a.smaps.arenas!, 7)} ${d(b.smaps.brk! - a.smaps.brk!)} ${d(b.smaps.anon! - a.smaps.anon!)} ${d(b.smaps.files! - a.smaps.files!)}  ${dh('main')} ${dh('engine')} ${dh('trial')}  ${d(sumOf(b, 'engine', 'externalMb') - sumOf(a, 'engine', 'externalMb'), 11)}  ${d(b.kvCacheMb - a.kvCacheMb, 13)}  ${alive}`,
  );
}
if (process.env.PROBE_OUT) writeFileSync(process.env.PROBE_OUT, JSON.stringify({ scale: SCALE, env: extraEnv, statuses, rows }, null, 2));
inspector.close();
console.log(`server exited with ${await server.stop()}`);
