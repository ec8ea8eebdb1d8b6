import { TrieRouter } from 'hono/router/trie-router';
import { http, type RequestHandler } from 'msw';
import { createRouter, type Router } from '../../api/router.js';
import type { RouterOptions, Runtime } from '../../types.js';

/** Routes outside /v1 that are served beside the base URL (at its parent path): Cohere's v2 client posts to /v2/rerank. */
const BESIDE = new Set(['/generate', '/health', '/rerank', '/v2/rerank', '/tokenize', '/detokenize']);
/** Anthropic's Messages routes sit at the origin's /v1/messages, whatever the base URL's path;
 * so does its model list, for a request that says it is Anthropic's (anthropic-version). */
const AT_ORIGIN = /^\/v1\/messages(?:\/|$)/;
const ANTHROPIC_AT_ORIGIN = /^\/v1\/models(?:\/|$)/;
const atOrigin = (path: string, request: Request) => AT_ORIGIN.test(path) || (ANTHROPIC_AT_ORIGIN.test(path) && request.headers.has('anthropic-version'));

/** Whether the router has a route (for any method) for a path; its catch-all middleware does not count. */
function routesOf(router: Router): (path: string) => boolean {
  const paths = new TrieRouter<true>();
  for (const r of router.routes) if (r.path !== '*' && r.path !== '/*') paths.add('ALL', r.path, true);
  return (path) => paths.match('GET', path)[0].length > 0;
}

/**
 * MSW handlers that answer with the router. With `baseURL`, the router's routes under it
 * (its path prefix stands for /v1; /generate and /health sit beside it, and /v1/messages
 * at its origin); without, any origin's /v1 routes, /generate and /health. They match only
 * those: every other request stays unhandled, so the app's `onUnhandledRequest` (msw 2) or
 * `onUnhandledFrame` (msw 3) still fires for it (a handler that matches and answers
 * nothing counts as handling it).
 */
export function handlersFor(runtime: Runtime, baseURL?: string, options: RouterOptions = {}): RequestHandler[] {
  const router = createRouter(runtime, options);
  const serves = routesOf(router);
  const base = baseURL ? new URL(baseURL.replace(/\/+$/, '')) : undefined;
  // An origin alone (Anthropic's or Cohere's default base URL) has the path '/': its routes sit at the root.
  const basePath = base?.pathname.replace(/\/+$/, '') ?? '';

  /** The router's path for a request URL, when it is one of the router's routes. */
  function routePath(url: URL, request: Request): string | undefined {
    const path = url.pathname;
    if (!base) return (path.startsWith('/v1/') || BESIDE.has(path)) && serves(path) ? path : undefined;
    if (url.origin !== base.origin) return undefined;
    if (path.startsWith(`${basePath}/`)) {
      const routed = `/v1${path.slice(basePath.length)}`;
      if (serves(routed)) return routed;
    }
    if (atOrigin(path, request) && serves(path)) return path;
    const parent = basePath.replace(/\/[^/]*$/, '');
    const rest = path.slice(parent.length);
    return path.startsWith(parent) && BESIDE.has(rest) && serves(rest) ? rest : undefined;
  }

  return [
    http.all(
      ({ request }) => routePath(new URL(request.url), request) !== undefined,
      ({ request }) => {
        const url = new URL(request.url);
        const path = routePath(url, request)!;
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
      },
    ),
  ];
}
