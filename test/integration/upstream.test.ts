// A front Hearth whose models are served by another Hearth (a real server process,
// with its own keys) through catalog `upstream` entries: answers equal the
// upstream's own, the caller's key never reaches it, a dead URL and a dropped
// connection are routed around, a 500 becomes 502 upstream_error, limits and caps
// are the front's, and a kill -9 mid-stream ends the stream with an error event,
// charged for what was delivered, and the model comes back when the upstream does.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { deadPort, faultyServer, catalogUpstream, writeCatalog } from '../helpers/upstream.js';
import { CLI } from '../helpers/cli.js';

const run = promisify(execFile);
const CAP_USD = 0.0003;

let upstream: TestServer;
let upstreamPort: number;
let upstreamKey: string;
let front: TestServer;
let faulty: Awaited<ReturnType<typeof faultyServer>>;
let key: string;
let deadUrl: string;
let admin: string;

const keys: Record<string, string> = {};
const client = (k = key) => new OpenAI({ baseURL: `${front.url}/v1`, apiKey: k, maxRetries: 0 });
const direct = () => new OpenAI({ baseURL: `${upstream.url}/v1`, apiKey: upstreamKey, maxRetries: 0 });
const post = (base: string, path: string, k: string, body: unknown) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
const messages = [{ role: 'user' as const, content: 'Tell me about the sea.' }];

async function usageOf(dataDir: string, name: string) {
  const { stdout } = await run(process.execPath, [...CLI, 'usage', '--data-dir', dataDir, '--json']);
  return (JSON.parse(stdout) as { name: string; requests: number; prompt_tokens: number; completion_tokens: number; spend_usd: number }[]).find(
    (a) => a.name === name,
  );
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function startUpstream(dataDir?: string): Promise<TestServer> {
  const s = await startServer(['--rate-limit', '10000', ...(upstreamPort ? ['--port', String(upstreamPort)] : [])], dataDir);
  await waitReady(s.url);
  return s;
}

beforeAll(async () => {
  await fixtures();
  const upDir = await mkdtemp(join(tmpdir(), 'hearth-upstream-'));
  upstreamKey = await createKey(upDir, ['--name', 'front-server']);
  upstream = await startUpstream(upDir);
  upstreamPort = Number(new URL(upstream.url).port);
  faulty = await faultyServer();
  deadUrl = `http://127.0.0.1:${await deadPort()}/v1`;
  const live = `${upstream.url}/v1`;

  const frontDir = await mkdtemp(join(tmpdir(), 'hearth-front-'));
  const catalog = await writeCatalog(frontDir, [
    catalogUpstream('svc/remote-chat', 'chat', [deadUrl, live], 'svc/tiny-chat'),
    catalogUpstream('svc/remote-embed', 'embedding', [live], 'svc/tiny-embed'),
    catalogUpstream('svc/flaky-chat', 'chat', [`${faulty.url}/reset/v1`, live], 'svc/tiny-chat'),
    catalogUpstream('svc/broken-chat', 'chat', [`${faulty.url}/bad/v1`], 'svc/tiny-chat'),
  ]);
  key = await createKey(frontDir, ['--name', 'dev', '--rate-limit', '10000']);
  admin = await createKey(frontDir, ['--name', 'ops', '--admin', '--rate-limit', '10000']);
  for (const name of ['killed', 'limited', 'sandboxed']) {
    keys[name] = await createKey(frontDir, ['--name', name, ...(name === 'limited' ? ['--rate-limit', '2'] : name === 'sandboxed' ? ['--sandbox'] : ['--rate-limit', '10000'])]);
  }
  process.env.UPSTREAM_KEY = upstreamKey;
  front = await startServer(['--catalog', catalog, '--rate-limit', '10000', '--sandbox-cap-usd', String(CAP_USD)], frontDir);
  delete process.env.UPSTREAM_KEY;
  await until('the upstream models to be ready', async () => {
    const m = ((await (await fetch(`${front.url}/health`)).json()) as { models: Record<string, string> }).models;
    return m['svc/remote-chat'] === 'ready' && m['svc/remote-embed'] === 'ready' && m['svc/flaky-chat'] === 'ready' ? true : undefined;
  });
}, 120_000);

afterAll(async () => {
  const code = await front?.stop('SIGTERM');
  await upstream?.stop('SIGTERM');
  await faulty?.close();
  expect(code).toBe(0);
});

describe('an upstream model', () => {
  it('answers a chat completion as the upstream does, under its own id', async () => {
    const via = await client().chat.completions.create({ model: 'svc/remote-chat', messages, temperature: 0, max_tokens: 24 });
    const own = await direct().chat.completions.create({ model: 'svc/tiny-chat', messages, temperature: 0, max_tokens: 24 });
    expect(via.model).toBe('svc/remote-chat');
    expect(via.choices[0]!.message.content).toBe(own.choices[0]!.message.content);
    expect(via.usage).toMatchObject({ prompt_tokens: own.usage!.prompt_tokens, completion_tokens: own.usage!.completion_tokens });
  });

  it('streams the same text chunk by chunk, with usage only when asked for', async () => {
    const own = await direct().chat.completions.create({ model: 'svc/tiny-chat', messages, temperature: 0, max_tokens: 24 });
    const chunks = [];
    for await (const c of await client().chat.completions.create({ model: 'svc/remote-chat', messages, temperature: 0, max_tokens: 24, stream: true })) {
      chunks.push(c);
    }
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.every((c) => c.model === 'svc/remote-chat' && !('usage' in c))).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(own.choices[0]!.message.content);

    const withUsage = [];
    const stream = await client().chat.completions.create({
      model: 'svc/remote-chat',
      messages,
      temperature: 0,
      max_tokens: 24,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const c of stream) withUsage.push(c);
    expect(withUsage.at(-1)!.choices).toEqual([]);
    expect(withUsage.at(-1)!.usage).toMatchObject({ prompt_tokens: own.usage!.prompt_tokens, completion_tokens: own.usage!.completion_tokens });
  });

  it('answers text completions and /generate (mapped onto completions) as the upstream does', async () => {
    const prompt = 'Once upon a time';
    const via = await client().completions.create({ model: 'svc/remote-chat', prompt, temperature: 0, max_tokens: 16 });
    const own = await direct().completions.create({ model: 'svc/tiny-chat', prompt, temperature: 0, max_tokens: 16 });
    expect(via.choices[0]!.text).toBe(own.choices[0]!.text);

    const body = { text: prompt, sampling_params: { temperature: 0, max_new_tokens: 16 } };
    const viaGen = (await (await post(front.url, '/generate', key, { ...body, model: 'svc/remote-chat' })).json()) as {
      text: string[];
      meta_info: Record<string, unknown>;
    };
    const ownGen = (await (await post(upstream.url, '/generate', upstreamKey, { ...body, model: 'svc/tiny-chat' })).json()) as typeof viaGen;
    expect(viaGen.text).toEqual(ownGen.text);
    expect(viaGen.meta_info).toMatchObject({
      model: 'svc/remote-chat',
      prompt_tokens: ownGen.meta_info.prompt_tokens,
      completion_tokens: ownGen.meta_info.completion_tokens,
      finish_reason: { type: (ownGen.meta_info.finish_reason as { type: string }).type },
    });

    const res = await post(front.url, '/generate', key, { ...body, model: 'svc/remote-chat', stream: true });
    const events = (await res.text()).split('\n\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]');
    const last = JSON.parse(events.at(-1)!.slice(6)) as typeof viaGen;
    expect(last.text).toEqual(ownGen.text);
  });

  it('returns the upstream embeddings, in base64 as the SDK asks by default', async () => {
    const input = ['the sea', 'a mountain'];
    const via = await client().embeddings.create({ model: 'svc/remote-embed', input });
    const own = await direct().embeddings.create({ model: 'svc/tiny-embed', input });
    expect(via.model).toBe('svc/remote-embed');
    expect(via.data.map((d) => d.embedding)).toEqual(own.data.map((d) => d.embedding));
    expect(via.data[0]!.embedding).toHaveLength(1536);
  });

  it('sends the upstream its own key: the caller key is refused there', async () => {
    const res = await post(upstream.url, '/v1/chat/completions', key, { model: 'svc/tiny-chat', messages });
    expect(res.status).toBe(401);
    const ok = await post(front.url, '/v1/chat/completions', key, { model: 'svc/remote-chat', messages, max_tokens: 4 });
    expect(ok.status).toBe(200);
  });

  it('passes an upstream 400 through in the envelope, naming the field and the front id', async () => {
    const res = await post(front.url, '/v1/chat/completions', key, { model: 'svc/remote-chat', messages, temperature: 5 });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { param: string; type: string; message: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error', param: 'temperature' });
    expect(body.error.message).not.toContain('svc/tiny-chat');
  });

  it('turns an upstream 500 into 502 upstream_error', async () => {
    const res = await post(front.url, '/v1/chat/completions', key, { model: 'svc/broken-chat', messages });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
  });

  it('never sends to a dead URL and fails over from one that drops the connection', async () => {
    for (let i = 0; i < 6; i++) {
      for (const model of ['svc/remote-chat', 'svc/flaky-chat']) {
        const res = await post(front.url, '/v1/chat/completions', key, { model, messages, max_tokens: 2 });
        expect(res.status, model).toBe(200);
      }
    }
    const status = await (await fetch(`${front.url}/status`)).text();
    expect(status).toContain(deadUrl);
    const metrics = await (await fetch(`${front.url}/metrics`)).text();
    expect(metrics).toContain(`hearth_upstream_healthy{model="svc/remote-chat",url="${deadUrl}"} 0`);
    expect(metrics).toContain(`hearth_upstream_healthy{model="svc/remote-chat",url="${upstream.url}/v1"} 1`);
    expect(metrics).toMatch(new RegExp(`hearth_upstream_errors_total\\{model="svc/flaky-chat",url="${faulty.url}/reset/v1"\\} [1-9]`));
    expect(metrics).toMatch(/hearth_upstream_request_duration_seconds_count\{model="svc\/remote-chat",url="[^"]+"\} [1-9]/);
    expect(metrics).toMatch(/hearth_completion_tokens_total\{model="svc\/remote-chat"\} [1-9]/);
  });

  it('applies the front rate limit and sandbox cap', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await post(front.url, '/v1/embeddings', keys.limited!, { model: 'svc/remote-embed', input: 'x' })).status);
    expect(statuses).toEqual([200, 200, 429]);

    // Each request holds its input's bound (its 480 bytes and a few tokens, × 0.10 USD per 1M)
    // at admission and settles to its real tokens: once the spend leaves no room for that hold, 429.
    const input = 'the sea '.repeat(60);
    const seen: number[] = [];
    for (let i = 0; i < 40 && !seen.includes(429); i++) {
      const res = await post(front.url, '/v1/embeddings', keys.sandboxed!, { model: 'svc/remote-embed', input });
      seen.push(res.status);
      if (res.status === 429) expect(((await res.json()) as { error: { code: string } }).error.code).toBe('insufficient_quota');
    }
    expect(seen.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(seen.at(-1)).toBe(429);
    const spent = await until('the charges', async () => (await usageOf(front.dataDir, 'sandboxed')) ?? undefined);
    expect(spent.requests).toBe(seen.filter((s) => s === 200).length);
    expect(spent.spend_usd).toBeLessThanOrEqual(CAP_USD);
  });

  it('charges the upstream usage to the caller account', async () => {
    const before = (await usageOf(front.dataDir, 'dev'))!;
    const r = await client().chat.completions.create({ model: 'svc/remote-chat', messages, temperature: 0, max_tokens: 8 });
    const after = await until('the charge', async () => {
      const u = (await usageOf(front.dataDir, 'dev'))!;
      return u.requests > before.requests ? u : undefined;
    });
    expect(after.prompt_tokens - before.prompt_tokens).toBe(r.usage!.prompt_tokens);
    expect(after.completion_tokens - before.completion_tokens).toBe(r.usage!.completion_tokens);
  });

  it('is added to a running server with `hearth models add --upstream`', async () => {
    const cli = (args: string[]) =>
      run(process.execPath, [...CLI, 'models', 'add', ...args]).then(
        (r) => ({ code: 0, out: r.stdout + r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
      );
    const bad = await cli(['--id', 'svc/added', '--upstream', `${upstream.url}/v1`, '--url', front.url, '--key', admin]);
    expect(bad.code).toBe(2);
    expect(bad.out).toContain('--upstream-model');
    const added = await cli([
      ...['--id', 'svc/added', '--upstream', `${upstream.url}/v1`, '--upstream-model', 'svc/tiny-chat', '--upstream-key-env', 'UPSTREAM_KEY'],
      ...['--price-in', '0.1', '--price-out', '0.4', '--wait', '--url', front.url, '--key', admin],
    ]);
    expect(added.out).toContain('svc/added');
    expect(added.code).toBe(0);
    const r = await client().chat.completions.create({ model: 'svc/added', messages, temperature: 0, max_tokens: 8 });
    const own = await direct().chat.completions.create({ model: 'svc/tiny-chat', messages, temperature: 0, max_tokens: 8 });
    expect(r.choices[0]!.message.content).toBe(own.choices[0]!.message.content);
    const served = JSON.parse(await readFile(join(front.dataDir, 'catalog.json'), 'utf8')) as { models: { id: string; upstream?: unknown }[] };
    expect(served.models.find((m) => m.id === 'svc/added')?.upstream).toMatchObject({ model: 'svc/tiny-chat', api_key_env: 'UPSTREAM_KEY' });
  });

  it('keeps the upstream key out of /status, /metrics, the logs and the data dir', async () => {
    const pages = (await (await fetch(`${front.url}/status`)).text()) + (await (await fetch(`${front.url}/metrics`)).text());
    expect(pages).not.toContain(upstreamKey);
    expect(front.output()).not.toContain(upstreamKey);
    for (const f of await readdir(front.dataDir, { recursive: true })) {
      const text = await readFile(join(front.dataDir, f)).then((b) => b.toString('latin1'), () => '');
      expect(text, f).not.toContain(upstreamKey);
    }
  });

  it('ends a stream with an error event when the upstream is killed, charges what was delivered, and recovers on restart', async () => {
    const stream = await client(keys.killed).chat.completions.create({
      model: 'svc/remote-chat',
      messages,
      max_tokens: 1800,
      ignore_eos: true,
      stream: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    let delivered = 0;
    let failure: unknown;
    try {
      for await (const c of stream) {
        if (c.choices[0]?.delta.content) delivered++;
        if (delivered === 5) upstream.proc.kill('SIGKILL');
      }
    } catch (e) {
      failure = e;
    }
    expect(String(failure)).toMatch(/upstream/);
    expect(delivered).toBeGreaterThanOrEqual(5);
    expect(delivered).toBeLessThan(1800);
    const charged = await until('the charge', async () => (await usageOf(front.dataDir, 'killed')) ?? undefined);
    expect(charged.completion_tokens).toBe(delivered);

    const down = await post(front.url, '/v1/chat/completions', key, { model: 'svc/remote-chat', messages, max_tokens: 2 });
    expect([502, 503]).toContain(down.status);

    upstream = await startUpstream(upstream.dataDir);
    await until('the model to come back', async () => {
      const res = await post(front.url, '/v1/chat/completions', key, { model: 'svc/remote-chat', messages, max_tokens: 2 });
      return res.status === 200 ? true : undefined;
    });
  }, 90_000);
});
