// The server's life: answering while models load, refusing a device it cannot
// use, and shutting down cleanly on a signal.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer } from '../helpers/server.js';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../helpers/cli.js';

describe('hearth serve', () => {
  it('prints a first admin key and serves requests made while models load once they are ready', async () => {
    await fixtures();
    const server = await startServer();
    try {
      const key = /svc_live_[0-9A-Za-z]{32,}/.exec(server.output())?.[0];
      expect(key).toBeDefined();
      const seen: { status: number; retryAfter: string | null; code?: string }[] = [];
      const client = new OpenAI({
        baseURL: `${server.url}/v1`,
        apiKey: key,
        maxRetries: 8,
        fetch: async (url, init) => {
          const res = await fetch(url, init);
          const code = res.status === 503 ? ((await res.clone().json()) as { error: { code: string } }).error.code : undefined;
          seen.push({ status: res.status, retryAfter: res.headers.get('retry-after'), code });
          return res;
        },
      });
      const r = await client.chat.completions.create({
        model: 'svc/tiny-chat',
        messages: [{ role: 'user', content: 'Hello!' }],
        temperature: 0,
      });
      expect(r.choices[0].finish_reason).toBe('stop');
      expect(seen.at(-1)!.status).toBe(200);
      // Anything before the success was the model still loading, said properly.
      for (const s of seen.slice(0, -1)) expect(s).toEqual({ status: 503, retryAfter: expect.stringMatching(/^\d+$/), code: 'model_not_ready' });
    } finally {
      expect(await server.stop('SIGINT')).toBe(0);
    }
  });

  it('finishes or cuts an in-flight stream and exits 0 on SIGTERM', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-term-'));
    const key = await createKey(dataDir);
    const server = await startServer([], dataDir);
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 8 });
    const stream = await client.chat.completions.create({
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: 'Hello!' }],
      stream: true,
    });
    const exit = server.stop('SIGTERM');
    let chunks = 0;
    await (async () => {
      for await (const _ of stream) chunks++;
    })().catch(() => undefined);
    expect(await exit).toBe(0);
    expect(chunks).toBeGreaterThan(0);
  });

  it('refuses --device cuda without the CUDA provider, saying how to install it', async () => {
    const run = promisify(execFile);
    const err = await run(process.execPath, [...CLI, 'serve', '--device', 'cuda', '--port', '0']).catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stderr).toContain('ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node');
  });
});
