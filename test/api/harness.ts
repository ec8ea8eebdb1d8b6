// Builds a router over the stub engine and stub access, and reads its answers.
import { createRouter } from '../../src/api/router.js';
import type { RouterOptions, Runtime } from '../../src/types.js';
import { AUTH, StubAccess } from './stub-access.js';
import { StubEngine, stubCatalog } from './stub-engine.js';

export function setup(options: RouterOptions = {}) {
  const engine = new StubEngine();
  const access = new StubAccess();
  const runtime: Runtime = { engine, access, catalog: stubCatalog, close: async () => {} };
  const app = createRouter(runtime, options);
  const fetch = (path: string, init: RequestInit = {}) => app.fetch(new Request(`http://hearth.test${path}`, init));
  const post = (path: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(path, {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const get = (path: string, headers: Record<string, string> = AUTH) => fetch(path, { headers });
  return { engine, access, runtime, app, fetch, post, get };
}

/** Every `data:` payload of an SSE body, in order (`[DONE]` kept as the string). */
export async function readEvents(res: Response): Promise<unknown[]> {
  const text = await res.text();
  return parseEvents(text);
}

export function parseEvents(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))
    .map((f) => f.slice(6))
    .map((d) => (d === '[DONE]' ? d : JSON.parse(d)));
}
