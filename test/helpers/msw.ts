import { setupServer } from 'msw/node';
import { afterAll, beforeAll } from 'vitest';
import { hearthHandlers, type HearthHandlers, type HearthHandlersOptions } from '../../src/front/msw/index.js';

/** hearth/msw's handlers behind msw's setupServer for a test file, as an application's suite
 * sets them up: a made-up base URL, no network. `models` may be given lazily (fixture folders
 * written in the suite's own setup). */
export function useHearthMsw(baseURL: string, options: { models?: () => Promise<string[]> } = {}): void {
  let handlers: HearthHandlers;
  let server: ReturnType<typeof setupServer>;
  beforeAll(async () => {
    const extra: HearthHandlersOptions = options.models ? { models: await options.models() } : {};
    handlers = await hearthHandlers({ baseURL, ...extra });
    server = setupServer(...handlers);
    server.listen({ onUnhandledFrame: 'error' });
  }, 120_000);
  afterAll(async () => {
    server?.close();
    await handlers?.close();
  });
}
