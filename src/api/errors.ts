// Every failure leaves the router as OpenAI's error envelope, because clients
// (the openai SDK above all) branch on status, `type` and `code`, and retry on
// headers such as retry-after and x-should-retry. This module is the one place
// that decides how a thrown value becomes a Response.
import { ZodError } from 'zod';
import type { core } from 'zod';
import { AccessError } from '../access/types.js';
import { isEngineError } from '../engine/errors.js';

export interface ErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export interface ErrorEnvelope {
  error: ErrorBody;
}

/** An error the router raises on purpose, already in the shape it is sent in. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string | null,
    message: string,
    readonly param: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A zod failure together with the input it judged, so a missing field can be told
 * apart from a wrong one (zod 4 does not keep the input in its issues). */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  constructor(
    readonly zod: ZodError,
    readonly input: unknown,
  ) {
    super(zod.message);
  }
}

export const invalidRequest = (message: string, param: string | null = null, code = 'invalid_value') =>
  new ApiError(400, 'invalid_request_error', code, message, param);

export const modelNotFound = (id: string) =>
  new ApiError(404, 'invalid_request_error', 'model_not_found', `The model \`${id}\` does not exist or you do not have access to it.`, 'model');

export const modelNotReady = (id: string, retryAfter = 1, why = 'is starting or redeploying') =>
  new ApiError(503, 'unavailable_error', 'model_not_ready', `The model \`${id}\` ${why}; retry shortly.`, null, {
    'retry-after': String(retryAfter),
  });

/** A model that failed to load: the reason is in the message (a redeploy, or the engine's restart, may load it again). */
export const modelFailed = (id: string, reason = 'no reason was recorded') =>
  new ApiError(503, 'unavailable_error', 'model_not_ready', `The model \`${id}\` failed to load: ${reason}`, null, { 'retry-after': '30' });

export const tooLarge = (max: number) =>
  new ApiError(413, 'invalid_request_error', 'request_too_large', `The request body is larger than the limit of ${max} bytes.`);

/** What a thrown value turns into; null means send nothing (the client is gone). */
export interface MappedError {
  status: number;
  body: ErrorEnvelope;
  headers: Record<string, string>;
  /** True for faults we did not raise on purpose: the status page lists them. */
  internal: boolean;
}

/** `messages[0].content`, `stop[1]`, `stream_options.include_usage`. */
export function paramPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out ? `.${String(seg)}` : String(seg);
  }
  return out;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const seg of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<PropertyKey, unknown>)[seg];
  }
  return v;
}

function fromZod(err: ZodError, input: unknown): ApiError {
  const issue = err.issues[0] as core.$ZodIssue | undefined;
  if (!issue) return invalidRequest('Invalid request body.');
  const param = paramPath(issue.path) || null;
  const missing =
    (issue.code === 'invalid_type' || issue.code === 'invalid_union') &&
    (input !== undefined ? valueAt(input, issue.path) === undefined : /received undefined/.test(issue.message));
  if (missing) {
    if (param === 'model') return invalidRequest('you must provide a model parameter', 'model', 'missing_required_parameter');
    return invalidRequest(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  }
  // Custom issues carry a message written for the user; zod's own need the field named.
  const message = issue.code === 'custom' ? issue.message : `Invalid '${param ?? 'body'}': ${issue.message.replace(/^Invalid input: /, '')}.`;
  return invalidRequest(message, param);
}

const envelope = (type: string, code: string | null, message: string, param: string | null = null): ErrorEnvelope => ({
  error: { message, type, param, code },
});

export function mapError(err: unknown, requestId?: string): MappedError | null {
  if (err instanceof ValidationError) err = fromZod(err.zod, err.input);
  else if (err instanceof ZodError) err = fromZod(err, undefined);

  if (err instanceof ApiError) {
    return { status: err.status, body: envelope(err.type, err.code, err.message, err.param), headers: { ...err.headers }, internal: false };
  }
  if (err instanceof AccessError || (isObj(err) && err.name === 'AccessError' && typeof err.status === 'number')) {
    const e = err as AccessError;
    return { status: e.status, body: envelope(e.type, e.code, e.message), headers: { ...(e.headers ?? {}) }, internal: false };
  }
  if (isEngineError(err)) {
    const { code, message, param } = err;
    switch (code) {
      case 'cancelled':
        return null;
      case 'model_not_found':
        return { status: 404, body: envelope('invalid_request_error', code, message, param ?? 'model'), headers: {}, internal: false };
      case 'model_not_ready':
        return {
          status: 503,
          body: envelope('unavailable_error', code, message, param),
          headers: { 'retry-after': String(Math.max(1, Math.ceil(err.retryAfter ?? 5))) },
          internal: false,
        };
      case 'context_length_exceeded':
        return { status: 400, body: envelope('invalid_request_error', code, message, param ?? 'messages'), headers: {}, internal: false };
      case 'invalid_value':
        return { status: 400, body: envelope('invalid_request_error', code, message, param), headers: {}, internal: false };
      case 'too_large':
        return { status: 413, body: envelope('invalid_request_error', 'request_too_large', message, param), headers: {}, internal: false };
      case 'device_lost':
        // The engine takes a new device and reloads: a retry shortly after is served.
        return { status: 503, body: envelope('unavailable_error', code, message, param), headers: { 'retry-after': '5' }, internal: false };
      case 'engine_crashed':
        // The engine (or its grammar engine) died under this request and is being restarted by itself:
        // nothing was wrong with the request, and a retry shortly after is served.
        return {
          status: 503,
          body: envelope('unavailable_error', 'engine_restarting', message, param),
          headers: { 'retry-after': String(Math.max(1, Math.ceil(err.retryAfter ?? 5))) },
          internal: false,
        };
      case 'unsupported_task':
        return { status: 400, body: envelope('invalid_request_error', 'invalid_value', message, param ?? 'model'), headers: {}, internal: false };
      default:
        break; // anything new: an internal fault
    }
  }
  const ref = requestId ? ` (request id ${requestId})` : '';
  return {
    status: 500,
    body: envelope(
      'server_error',
      'server_error',
      `The server had an error while processing your request${ref}. See /status for the service's state, and retry.`,
    ),
    headers: {},
    internal: true,
  };
}

export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

/** Status 499 (client closed request) with no body stands for "nothing sent". */
export const CLIENT_GONE_STATUS = 499;

export function errorToResponse(err: unknown, requestId?: string): Response {
  const m = mapError(err, requestId);
  if (!m) return new Response(null, { status: CLIENT_GONE_STATUS });
  return jsonResponse(m.body, m.status, m.headers);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** An internal fault as the request log records it: its kind, message and stack (no request data). */
export function describeFault(err: unknown): { type: string; message: string; stack?: string } {
  if (isObj(err)) {
    const type = typeof err.name === 'string' ? err.name : 'Error';
    const message = typeof err.message === 'string' ? err.message : String(err);
    return typeof err.stack === 'string' ? { type, message, stack: err.stack } : { type, message };
  }
  return { type: typeof err, message: String(err) };
}
