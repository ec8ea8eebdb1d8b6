// Structured outputs and tool calls over HTTP (the real server, the engine in its worker)
// with the Vercel AI SDK and LangChain; the checks themselves live in
// test/helpers/structured-clients.ts, shared with the hearth/msw front door.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';
import { describeStructuredClients } from '../helpers/structured-clients.js';

let server: TestServer;
let apiKey: string;

beforeAll(async () => {
  await fixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-clients-'));
  apiKey = await createKey(dataDir);
  server = await startServer([], dataDir);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

describeStructuredClients('the HTTP server', () => ({ baseURL: `${server.url}/v1`, apiKey }));
