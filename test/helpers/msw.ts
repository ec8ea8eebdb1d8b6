import { setupServer } from 'msw/node';
import { afterAll, beforeAll } from 'vitest';
import { hearthHandlers, type HearthHandlers } from '../../src/front/msw/index.js';

/** hearth/msw's handlers behind msw's setupServer for a test file, as an application's suite sets them up: a made-up base URL, no network. */
export function useHearthMsw(baseURL: string): void {
  let handlers: HearthHandlers;
  let server: ReturnType<typeof setupServer>;
  beforeAll(async () => {
    handlers = await hearthHandlers({ baseURL });
    server = setupServer(...handlers);
    server.listen({ onUnhandledFrame: 'error' });
  }, 120_000);
  afterAll(async () => {
    server?.close();
    await handlers?.close();
  });
}
