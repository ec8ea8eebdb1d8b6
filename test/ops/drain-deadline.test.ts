// Shutdown's deadline, with serve() in-process: a request that would outlive the
// drain deadline is cut when its share of it passes (the last quarter, at most 2 s, is kept
// for the engine to dispose of its models), and close() returns within the deadline.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { serve } from '../../src/front/node/serve.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, waitReady } from '../helpers/server.js';

it('cuts what is still running when the drain deadline passes', async () => {
  await fixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-deadline-'));
  const key = await createKey(dataDir);
  const server = await serve({ port: 0, dataDir, drainMs: 400, logLevel: 'silent', models: ['svc/tiny-chat'] });
  await waitReady(server.url);
  const res = await fetch(`${server.url}/generate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: 'Once', stream: true, sampling_params: { max_new_tokens: 2000, ignore_eos: true, temperature: 0 } }),
  });
  const reader = res.body!.getReader();
  await reader.read();
  const started = Date.now();
  await server.close();
  const took = Date.now() - started;
  // In-flight requests get the first three quarters of the 400 ms; the whole close stays near the deadline.
  expect(took).toBeGreaterThanOrEqual(280);
  expect(took).toBeLessThan(1500);
  // The stream ends (cut) rather than running to 2000 tokens.
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
  } catch {
    // a cut connection
  }
  expect(text).not.toContain('"completion_tokens":2000');
});
