// Structured outputs and tool calls through hearth/msw with the Vercel AI SDK and
// LangChain; the checks themselves live in test/helpers/structured-clients.ts.
import { setupServer } from 'msw/node';
import { afterAll, beforeAll } from 'vitest';
import { hearthHandlers, type HearthHandlers } from '../../src/front/msw/index.js';
import { describeStructuredClients } from '../helpers/structured-clients.js';

const baseURL = 'https://api.example.test/v1';
const apiKey = `svc_live_${'a1B2'.repeat(8)}`;
let handlers: HearthHandlers;
let server: ReturnType<typeof setupServer>;

beforeAll(async () => {
  handlers = await hearthHandlers({ baseURL });
  server = setupServer(...handlers);
  server.listen({ onUnhandledRequest: 'error' });
}, 120_000);

afterAll(async () => {
  server?.close();
  await handlers?.close();
});

describeStructuredClients('hearth/msw', () => ({ baseURL, apiKey }));
