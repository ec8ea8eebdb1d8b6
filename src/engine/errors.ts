// Errors the engine raises on purpose. They cross the worker boundary with their
// code and param intact (see installErrorTransfer), and the router maps each code
// to an HTTP status and the OpenAI error envelope.

export type EngineErrorCode =
  | 'model_not_found'
  | 'model_not_ready'
  | 'context_length_exceeded'
  | 'invalid_value'
  /** An input over a size limit (an image's pixels): 413. */
  | 'too_large'
  | 'unsupported_task'
  | 'cancelled'
  | 'engine_crashed'
  | 'device_lost';

export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: EngineErrorCode,
    message: string,
    readonly param: string | null = null,
    /** Seconds a client should wait before retrying (model_not_ready). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

export interface SerializedEngineError {
  name: 'EngineError';
  code: EngineErrorCode;
  message: string;
  param: string | null;
  retryAfter?: number;
}

export function isEngineError(e: unknown): e is EngineError | SerializedEngineError {
  return typeof e === 'object' && e !== null && (e as { name?: unknown }).name === 'EngineError';
}

export function serializeError(e: unknown): SerializedEngineError | { name: string; message: string; stack?: string } {
  if (e instanceof EngineError) {
    return { name: 'EngineError', code: e.code, message: e.message, param: e.param, retryAfter: e.retryAfter };
  }
  const err = e instanceof Error ? e : new Error(String(e));
  return { name: err.name, message: err.message, stack: err.stack };
}

export function deserializeError(v: ReturnType<typeof serializeError>): Error {
  if (v.name === 'EngineError') {
    const s = v as SerializedEngineError;
    return new EngineError(s.code, s.message, s.param, s.retryAfter);
  }
  return Object.assign(new Error(v.message), v);
}
