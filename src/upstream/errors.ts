// How an upstream's failures reach the caller: a 4xx is the caller's fault and
// passes through in Hearth's envelope (with the upstream's model name replaced by
// Hearth's id); anything that says the upstream could not serve (5xx, a timeout, a
// refused connection, a refused key) is a 502 upstream_error. Messages never carry
// the upstream's key or URL.
import { ApiError } from '../api/errors.js';

export const upstreamError = (id: string, why: string) =>
  new ApiError(502, 'server_error', 'upstream_error', `The upstream serving \`${id}\` failed: ${why}.`);

/** Why a fetch failed, in a few words ("connection refused", "timed out"). */
export function networkReason(err: unknown): string {
  const e = err as { name?: string; code?: string; cause?: { code?: string; name?: string } };
  const code = e?.cause?.code ?? e?.code;
  if (e?.name === 'TimeoutError' || e?.cause?.name === 'HeadersTimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT') return 'timed out';
  if (code === 'UND_ERR_BODY_TIMEOUT') return 'timed out while streaming';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return 'connection reset';
  if (code === 'UND_ERR_CONNECT_TIMEOUT') return 'connect timed out';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  return code ? code.toLowerCase() : 'network error';
}

function swapModel(text: string, upstreamModel: string, id: string): string {
  return upstreamModel ? text.split(upstreamModel).join(id) : text;
}

/** An upstream's non-2xx answer as the error Hearth sends. */
export async function fromUpstreamResponse(res: Response, id: string, upstreamModel: string): Promise<ApiError> {
  if (res.status >= 500 || res.status === 401 || res.status === 403 || res.status < 400) {
    void res.body?.cancel().catch(() => undefined);
    const why = res.status === 401 || res.status === 403 ? `it refused Hearth's credentials (${res.status})` : `it answered ${res.status}`;
    return upstreamError(id, why);
  }
  let body: { error?: Partial<Record<'message' | 'type' | 'param' | 'code', unknown>> | string; message?: unknown } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {
    // not JSON: the status alone says enough
  }
  const e = typeof body.error === 'object' && body.error ? body.error : {};
  const str = (v: unknown) => (typeof v === 'string' ? v : v == null ? null : String(v));
  const message =
    str(e.message) ?? (typeof body.error === 'string' ? body.error : null) ?? str(body.message) ?? `The upstream refused the request (${res.status}).`;
  const headers: Record<string, string> = {};
  const retry = res.headers.get('retry-after');
  if (retry) headers['retry-after'] = retry;
  return new ApiError(
    res.status,
    str(e.type) ?? 'invalid_request_error',
    str(e.code),
    swapModel(message, upstreamModel, id),
    str(e.param),
    headers,
  );
}
