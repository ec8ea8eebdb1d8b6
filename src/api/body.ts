// Reading a JSON body under a byte limit. Content-Length is checked first, but a
// chunked body has none (and a client can lie), so the limit is also enforced
// while the stream is read, cancelling it as soon as it goes over.
import { ApiError, invalidRequest, tooLarge } from './errors.js';
import { BodyTextMeter } from './body-text-meter.js';
import { readLimited } from './read-limited.js';

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
  const bytes = await readLimited(req.body, (total, chunk) => {
    meter?.feed(chunk);
    if (meter && meter.text > textLimit!) return tooLarge(textLimit!);
    return total > maxBytes ? tooLarge(maxBytes) : undefined;
  });
  // A client that goes away mid-upload ends the stream early: a cut body is never run (nor charged).
  if (declared !== null && /^\d+$/.test(declared.trim()) && bytes.length < Number(declared)) {
    throw invalidRequest(`The request body was cut short: Content-Length announced ${Number(declared)} bytes and ${bytes.length} arrived.`);
  }
  return bytes;
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
