// Structured JSON logs (pino) for the Node server: one line per response with its
// request id, and lines for model operations and shutdown. Nothing that could hold
// a key is ever passed in: no headers, no bodies, no query strings.
import { pino, type Logger } from 'pino';
import type { Observer, RequestEvent } from '../types.js';

export type { Logger };

export function createLogger(opts: { level?: string; destination?: NodeJS.WritableStream } = {}): Logger {
  const level = opts.level ?? process.env.HEARTH_LOG_LEVEL ?? 'info';
  return pino(
    {
      level,
      base: { service: 'hearth' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** Logs each response: request id, method, route, status and time to headers. */
export function requestLogger(log: Logger): Observer {
  return {
    request(ev: RequestEvent) {
      const fields = { request_id: ev.requestId, method: ev.method, route: ev.route, status: ev.status, ms: ev.durationMs };
      if (ev.status >= 500 && ev.status !== 503) log.error(ev.error ? { ...fields, err: ev.error } : fields, 'request failed');
      else log.info(fields, 'request');
    },
  };
}

/** Several observers as one. */
export function observers(...list: Observer[]): Observer {
  const each = (f: (o: Observer) => void) => {
    for (const o of list) {
      try {
        f(o);
      } catch {
        // one observer failing must not stop the others
      }
    }
  };
  return {
    request: (ev) => each((o) => o.request(ev)),
    upstreamTokens: (model, p, c) => each((o) => o.upstreamTokens?.(model, p, c)),
  };
}
