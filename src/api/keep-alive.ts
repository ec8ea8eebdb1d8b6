// A request's `keep_alive` (Ollama's semantics, see engine/keep-alive.ts), read from the raw
// body beside the route's own schema, since every generating, embedding and scoring route takes it.
import { parseKeepAlive } from '../engine/keep-alive.js';
import type { KeepAlive } from '../engine/protocol.js';
import { invalidRequest } from './errors.js';

/** The engine's keep_alive_ms for this request (absent: the server's); an invalid value is a 400 naming `keep_alive`. */
export function keepAliveOf(body: Record<string, unknown>): KeepAlive {
  const v = body.keep_alive;
  if (v === undefined || v === null) return {};
  const ms = parseKeepAlive(v);
  if (ms === null) {
    throw invalidRequest(
      `Invalid keep_alive ${JSON.stringify(v)}: give a duration ("30s", "5m", "1h"), a number of seconds, 0 to unload the model when this request ends, or -1 to keep it loaded.`,
      'keep_alive',
    );
  }
  return { keep_alive_ms: ms };
}
