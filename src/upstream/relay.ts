// Passes an upstream's SSE stream on, event by event, with backpressure: the
// upstream is read only when the client has taken what was sent before
// (highWaterMark 0, pull-based), so a slow client slows the upstream's socket
// instead of making Hearth buffer the reply. Each JSON event can be rewritten or
// dropped; the end of the stream (clean, upstream died, client left) is reported
// once.
import type { ApiError } from '../api/errors.js';
import { SSE_HEADERS } from '../api/sse.js';
import { networkReason, upstreamError } from './errors.js';

export type RelayEnd = { kind: 'done' } | { kind: 'failed'; error: ApiError } | { kind: 'cancelled' };

export interface RelayOptions {
  id: string;
  /** Rewrites one event; undefined drops it. */
  map(event: Record<string, unknown>): unknown;
  /** Events to send after the upstream's last one, before [DONE]. */
  finish?(): unknown[];
  /** Called once, however the stream ended. */
  onEnd(end: RelayEnd): void;
}

const encoder = new TextEncoder();
const frame = (payload: string) => encoder.encode(`data: ${payload}\n\n`);

export function relaySse(upstream: ReadableStream<Uint8Array>, opts: RelayOptions): Response {
  const reader = upstream.getReader();
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
              // The upstream reported a failure in-stream: pass it on and stop.
              controller.enqueue(frame(JSON.stringify(event)));
              controller.close();
              void reader.cancel().catch(() => undefined);
              end({ kind: 'failed', error: upstreamError(opts.id, 'it reported an error mid-stream') });
              return;
            }
            const mapped = opts.map(event);
            if (mapped === undefined) continue;
            controller.enqueue(frame(JSON.stringify(mapped)));
            sent = true;
          }
          if (upstreamDone) {
            for (const e of opts.finish?.() ?? []) controller.enqueue(frame(JSON.stringify(e)));
            controller.enqueue(frame('[DONE]'));
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
            const error = upstreamError(opts.id, `the stream broke off (${networkReason(err)})`);
            controller.enqueue(frame(JSON.stringify({ error: { message: error.message, type: error.type, param: null, code: error.code } })));
            controller.close();
            end({ kind: 'failed', error });
            return;
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
