import { http, type RequestHandler } from 'msw';
import { createRouter } from '../../api/router.js';
import type { Runtime } from '../../types.js';

/**
 * MSW handlers that answer with the router. With `baseURL`, requests under it are
 * served (its path prefix stands for /v1, and /generate and /health sit beside it);
 * without, any origin's /v1/*, /generate and /health. Anything else falls through.
 */
export function handlersFor(runtime: Runtime, baseURL?: string): RequestHandler[] {
  const router = createRouter(runtime);
  const base = baseURL ? new URL(baseURL.replace(/\/+$/, '')) : undefined;

  function routePath(url: URL): string | undefined {
    if (!base) return /^\/(v1\/|generate$|health$)/.test(url.pathname) ? url.pathname : undefined;
    if (url.origin !== base.origin) return undefined;
    if (url.pathname.startsWith(`${base.pathname}/`)) return `/v1${url.pathname.slice(base.pathname.length)}`;
    const parent = base.pathname.replace(/\/[^/]*$/, '');
    const rest = url.pathname.slice(parent.length);
    return url.pathname.startsWith(parent) && (rest === '/generate' || rest === '/health') ? rest : undefined;
  }

  return [
    http.all('*', ({ request }) => {
      const url = new URL(request.url);
      const path = routePath(url);
      if (path === undefined) return undefined;
      if (path === url.pathname) return router.fetch(request);
      const target = new URL(path + url.search, url.origin);
      const init: RequestInit & { duplex?: 'half' } = {
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal: request.signal,
        duplex: 'half',
      };
      return router.fetch(new Request(target, init));
    }),
  ];
}
