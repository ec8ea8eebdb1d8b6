// GET /metrics: Prometheus text. The router stays runtime-agnostic: the runtime
// renders it (the Node server uses prom-client). Open by default; with a metrics
// key (`--metrics-key`), only `Authorization: Bearer <that key>` gets it.
import type { Ctx, RouteDeps } from '../context.js';
import { ApiError } from '../errors.js';

/** Compares without returning early on the first difference. */
function sameText(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

export function metrics(deps: RouteDeps) {
  return async (c: Ctx): Promise<Response> => {
    const source = deps.runtime.metrics;
    if (!source) throw new ApiError(404, 'invalid_request_error', 'unknown_url', 'Unknown request URL: GET /metrics. This server does not export metrics.');
    if (source.key !== undefined) {
      const given = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim() ?? '';
      if (!sameText(given, source.key)) {
        throw new ApiError(401, 'invalid_request_error', 'invalid_api_key', '/metrics needs `Authorization: Bearer <metrics key>` (the server was started with --metrics-key).');
      }
    }
    const { contentType, body } = await source.render();
    return new Response(body, { status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' } });
  };
}
