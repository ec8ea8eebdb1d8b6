// Reading a JSON body under a byte limit. Content-Length is checked first, but a
// chunked body has none (and a client can lie), so the limit is also enforced
// while the stream is read, cancelling it as soon as it goes over.
import { ApiError, invalidRequest, tooLarge } from './errors.js';
import { BodyTextMeter } from './body-text-meter.js';

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

export function checkContentLength(req: Request, maxBytes: number): void {
  const cl = req.headers.get('content-length');
  if (cl !== null && /^\d+$/.test(cl.trim()) && Number(cl) > maxBytes) throw tooLarge(maxBytes);
}

/** `textLimit`: a body that may carry image payloads beyond the limit holds its other bytes to this (body-text-meter.ts). */
export async function readBodyBytes(req: Request, maxBytes: number, textLimit?: number): Promise<Uint8Array> {
  checkContentLength(req, maxBytes);
  const meter = textLimit === undefined ? undefined : new BodyTextMeter();
  const declared = req.headers.get('content-length');
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    meter?.feed(value);
    if (total > maxBytes || (meter && meter.text > textLimit!)) {
      void reader.cancel().catch(() => {});
      throw tooLarge(meter && meter.text > textLimit! ? textLimit! : maxBytes);
    }
    chunks.push(value);
  }
  // A client that goes away mid-upload ends the stream early: a cut body is never run (nor charged).
  if (declared !== null && /^\d+$/.test(declared.trim()) && total < Number(declared)) {
    throw invalidRequest(`The request body was cut short: Content-Length announced ${Number(declared)} bytes and ${total} arrived.`);
  }
  const out = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

const INVALID_JSON =
  'We could not parse the JSON body of your request. (HINT: This likely means you aren\'t using your HTTP library correctly. The OpenAI API expects a JSON payload.)';

/** The body as a JSON object; 400 invalid_json when it is not JSON, 400 invalid_value when not an object. */
export async function readJsonObject(req: Request, maxBytes: number, textLimit?: number): Promise<Record<string, unknown>> {
  const bytes = await readBodyBytes(req, maxBytes, textLimit);
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw new ApiError(400, 'invalid_request_error', 'invalid_json', INVALID_JSON);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidRequest('The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}
