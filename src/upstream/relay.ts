// Passes an upstream's SSE stream on, event by event, with backpressure: the
// upstream is read only when the client has taken what was sent before
// (highWaterMark 0, pull-based), so a slow client slows the upstream's socket
// instead of making Hearth buffer the reply. Each JSON event can be rewritten,
// dropped or made several (a chat chunk becomes Responses events); the end of the
// stream (clean, upstream died, client left) is reported once. Chat-style streams end
// with [DONE]; Responses-style ones (`named`) name each event by its type instead.
import { ApiError, mapError } from '../api/errors.js';
import { SSE_HEADERS } from '../api/sse.js';
import { networkReason, upstreamError } from './errors.js';

export type RelayEnd = { kind: 'done' } | { kind: 'failed'; error: ApiError } | { kind: 'cancelled' };

export interface RelayOptions {
  id: string;
  /** Rewrites one event; undefined drops it, an array sends each of its events. May wait
   * (a response stored before its last event goes out); a failure ends the stream. */
  map(event: Record<string, unknown>): unknown;
  /** Events to send after the upstream's last one (before [DONE]). */
  finish?(): unknown[] | Promise<unknown[]>;
  /** Called once, however the stream ended. */
  onEnd(end: RelayEnd): void;
  /** Responses-style: `event: <type>` before each event's data, and no [DONE]. */
  named?: boolean;
  /** The last event(s) of a stream that failed (default: OpenAI's `{"error": {...}}`). */
  failure?(error: ApiError): unknown;
}

const encoder = new TextEncoder();
const frame = (payload: string) => encoder.encode(`data: ${payload}\n\n`);
const errorEvent = (e: ApiError) => ({ error: { message: e.message, type: e.type, param: null, code: e.code } });

export function relaySse(upstream: ReadableStream<Uint8Array>, opts: RelayOptions): Response {
  const reader = upstream.getReader();
  const encode = (event: unknown) =>
    opts.named ? encoder.encode(`event: ${(event as { type?: string }).type}\ndata: ${JSON.stringify(event)}\n\n`) : frame(JSON.stringify(event));
  const enqueue = (controller: ReadableStreamDefaultController<Uint8Array>, mapped: unknown) => {
    const events = Array.isArray(mapped) ? mapped : mapped === undefined ? [] : [mapped];
    for (const e of events) controller.enqueue(encode(e));
    return events.length > 0;
  };
  /** Ends the stream with its failure event. */
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, error: ApiError) => {
    enqueue(controller, opts.failure ? opts.failure(error) : errorEvent(error));
    controller.close();
    void reader.cancel().catch(() => undefined);
    end({ kind: 'failed', error });
  };
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  let upstreamDone = false;
  const end = (e: RelayEnd) => {
    if (ended) return;
    ended = true;
    opts.onEnd(e);
  };

  /** The complete events in the buffer, as their data payloads. */
  const takeEvents = (): string[] => {
    const out: string[] = [];
    buffer = buffer.replace(/\r\n/g, '\n');
    let cut: number;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) out.push(data);
    }
    return out;
  };

  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          let sent = false;
          for (const data of takeEvents()) {
            if (data === '[DONE]') continue;
            let event: Record<string, unknown>;
            try {
              event = JSON.parse(data) as Record<string, unknown>;
            } catch {
              continue; // a comment or keep-alive line in a form we do not know
            }
            if (event.error) {
              // The upstream reported a failure in-stream: pass it on (as is, unless the
              // stream has its own failure event) and stop.
              const error = upstreamError(opts.id, 'it reported an error mid-stream');
              if (opts.failure) return fail(controller, error);
              controller.enqueue(frame(JSON.stringify(event)));
              controller.close();
              void reader.cancel().catch(() => undefined);
              end({ kind: 'failed', error });
              return;
            }
            try {
              if (enqueue(controller, await opts.map(event))) sent = true;
            } catch (err) {
              return fail(controller, asApiError(err, opts.id));
            }
          }
          if (upstreamDone) {
            try {
              enqueue(controller, await opts.finish?.());
            } catch (err) {
              return fail(controller, asApiError(err, opts.id));
            }
            if (!opts.named) controller.enqueue(frame('[DONE]'));
            controller.close();
            end({ kind: 'done' });
            return;
          }
          if (sent) return;
          let r: ReadableStreamReadResult<Uint8Array>;
          try {
            r = await reader.read();
          } catch (err) {
            if (ended) return;
            return fail(controller, upstreamError(opts.id, `the stream broke off (${networkReason(err)})`));
          }
          if (r.done) {
            upstreamDone = true;
            buffer += '\n\n'; // a last event without its blank line still counts
            continue;
          }
          buffer += decoder.decode(r.value, { stream: true });
        }
      },
      cancel() {
        void reader.cancel().catch(() => undefined);
        end({ kind: 'cancelled' });
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

/** What ended a stream from our side (a store that could not keep the response), as the error sent. */
function asApiError(err: unknown, id: string): ApiError {
  if (err instanceof ApiError) return err;
  const m = mapError(err);
  return m ? new ApiError(m.status, m.body.error.type, m.body.error.code, m.body.error.message) : upstreamError(id, 'the stream could not be relayed');
}

/** Events written by a translator (Responses', Messages') between two chunks, handed to relaySse's map by `take`. */
export function eventQueue(): { push: (event: unknown) => void; take: () => unknown[] } {
  let queued: unknown[] = [];
  return {
    push: (event) => void queued.push(event),
    take: () => {
      const out = queued;
      queued = [];
      return out;
    },
  };
}
