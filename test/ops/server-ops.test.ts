// Operations on a real server process: JSON logs with request ids (and never a key),
// /metrics after real generations (and --metrics-key), announced incidents on /status,
// and SIGTERM draining a request in flight.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady } from '../helpers/server.js';
import { CLI } from '../helpers/cli.js';

const run = promisify(execFile);
const cli = (args: string[]) => run(process.execPath, [...CLI, ...args]);

function jsonLines(out: string): Record<string, unknown>[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('a running server', () => {
  it('logs JSON lines with request ids and no keys; exports metrics behind --metrics-key; shows incidents on /status', async () => {
    await fixtures();
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-ops-'));
    const key = await createKey(dataDir);
    const server = await startServer(['--metrics-key', 'scrape-me'], dataDir);
    try {
      await waitReady(server.url);
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': 'req_trace_me_123' },
        body: JSON.stringify({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0 }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
      const bad = await fetch(`${server.url}/v1/models`, { headers: { authorization: `Bearer ${key}x` } });
      expect(bad.status).toBe(401);

      // Metrics: 401 without the key, then real figures.
      expect((await fetch(`${server.url}/metrics`)).status).toBe(401);
      const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer scrape-me' } })).text();
      expect(text).toContain('hearth_http_requests_total{method="POST",route="/v1/chat/completions",status="200"} 1');
      expect(text).toContain(`hearth_completion_tokens_total{model="svc/tiny-chat"} ${body.usage.completion_tokens}`);
      expect(text).toContain(`hearth_prompt_tokens_total{model="svc/tiny-chat"} ${body.usage.prompt_tokens}`);
      expect(text).toContain('hearth_time_to_first_token_seconds_count{model="svc/tiny-chat"} 1');
      expect(text).toContain('hearth_model_status{model="svc/tiny-chat",status="ready"} 1');
      expect(text).toContain('hearth_queue_depth{model="svc/tiny-chat"} 0');
      expect(text).toContain('hearth_process_cpu_seconds_total');

      // Incidents announced from the CLI show on /status with their time.
      const before = Date.now();
      await cli(['incident', 'add', '--data-dir', dataDir, 'Slow responses on <svc/tiny-chat>; investigating']);
      const { stdout } = await cli(['incident', 'list', '--data-dir', dataDir, '--json']);
      const [inc] = JSON.parse(stdout) as { at: string; text: string }[];
      expect(Date.parse(inc!.at)).toBeGreaterThanOrEqual(before - 1000);
      const page = await (await fetch(`${server.url}/status`)).text();
      expect(page).toContain('Slow responses on &lt;svc/tiny-chat&gt;; investigating');
      expect(page).toContain(`datetime="${inc!.at}"`);
      expect(page).toContain('/health: <code>ok</code>');
      expect(page).toMatch(/svc\/tiny-chat<\/td>.*s-ready/);

      // Logs: one JSON line per response with its request id; no key anywhere.
      await new Promise((r) => setTimeout(r, 100));
      const lines = jsonLines(server.output());
      const line = lines.find((l) => l.request_id === 'req_trace_me_123');
      expect(line).toMatchObject({ level: 'info', method: 'POST', route: '/v1/chat/completions', status: 200, service: 'hearth' });
      expect(typeof line!.time).toBe('string');
      expect(lines.some((l) => l.status === 401 && l.route === '/v1/models')).toBe(true);
      expect(lines).toContainEqual(expect.objectContaining({ msg: 'model ready', model: 'svc/tiny-chat' }));
      expect(server.output()).not.toContain(key);
      expect(server.output()).not.toContain(key.slice(9, 30));
      expect(server.output()).not.toContain('scrape-me');
    } finally {
      expect(await server.stop('SIGTERM')).toBe(0);
    }
  });

  it('on SIGTERM finishes the request in flight, refuses new connections, logs the drain and exits 0', async () => {
    await fixtures();
    const dataDir = await mkdtemp(join(tmpdir(), 'hearth-drain-'));
    const key = await createKey(dataDir);
    const server = await startServer([], dataDir);
    await waitReady(server.url);
    // Streamed, so the signal goes only once the request is surely in flight (its first event
    // read); short enough to end well within the drain's deadline on a loaded machine.
    const res = await fetch(`${server.url}/v1/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'svc/tiny-chat',
        prompt: 'Once upon a time',
        max_tokens: 300,
        ignore_eos: true,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = decoder.decode((await reader.read()).value, { stream: true });
    const exit = server.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
    for (let r = await reader.read(); !r.done; r = await reader.read()) text += decoder.decode(r.value, { stream: true });
    const chunks = text
      .split('\n\n')
      .filter((e) => e.startsWith('data: {'))
      .map((e) => JSON.parse(e.slice(6)) as { choices: { finish_reason: string | null }[]; usage?: { completion_tokens: number } | null });
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(chunks.flatMap((c) => c.choices.map((x) => x.finish_reason)).filter(Boolean)).toEqual(['length']);
    expect(chunks.at(-1)!.usage?.completion_tokens).toBe(300);
    expect(await exit).toBe(0);
    const lines = jsonLines(server.output());
    expect(lines.some((l) => l.msg === 'shutting down: draining in-flight requests')).toBe(true);
    expect(lines.some((l) => l.msg === 'drained')).toBe(true);
  });
});
