// A stopped server stops: SIGTERM ends `hearth serve` within its drain deadline (10 s) whatever
// the engine is doing: here streams decoding, and schemas compiling, among them one inside every
// size limit whose grammar takes XGrammar minutes (300 properties, at most 150 of them), which
// used to keep the engine's thread busy long after the port had closed. Exit code 0.
import { describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady } from '../helpers/server.js';

const DRAIN_MS = 10_000;

describe('hearth serve on SIGTERM', () => {
  it('exits within the drain deadline while streams decode and schemas compile', async () => {
    await fixtures();
    const server = await startServer(['--models', 'svc/tiny-chat']);
    try {
      const key = await createKey(server.dataDir, ['--rate-limit', '100000']);
      await waitReady(server.url);
      const post = (path: string, body: unknown) =>
        fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }).then((r) => r.text()).catch(() => 'cut');
      const streams = [1, 2].map((i) =>
        post('/generate', { text: `Stream ${i}`, stream: true, sampling_params: { max_new_tokens: 1_500, ignore_eos: true } }),
      );
      const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
      const slow = { type: 'object', properties: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, { type: 'string' }])), maxProperties: 150 };
      const structured = [
        post('/generate', { text: 'hi', sampling_params: { max_new_tokens: 4, json_schema: deep } }),
        post('/generate', { text: 'hi', sampling_params: { max_new_tokens: 4, json_schema: JSON.stringify(slow) } }),
        post('/generate', { text: 'hi', sampling_params: { max_new_tokens: 64, regex: '(.{1,100}){1,100}' } }),
        post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 64, response_format: { type: 'json_object' } }),
      ];
      await new Promise((r) => setTimeout(r, 1_000));
      const t0 = Date.now();
      const exited = new Promise<number | null>((resolve) => server.proc.once('exit', resolve));
      server.proc.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), DRAIN_MS + 8_000))]);
      const took = Date.now() - t0;
      expect(code, `${server.proc.signalCode} ${server.output().slice(-3_000)}`).toBe(0);
      expect(took, server.output().slice(-2_000)).toBeLessThan(DRAIN_MS + 3_000);
      await Promise.all([...streams, ...structured]);
    } finally {
      if (server.proc.exitCode === null) server.proc.kill('SIGKILL');
    }
  }, 60_000);
});
