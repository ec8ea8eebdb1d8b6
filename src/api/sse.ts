// Server-sent events as OpenAI writes them: `data: {json}\n\n` per chunk, then
// `data: [DONE]\n\n`. Once the headers are out an error can no longer change the
// status, so it travels as a `data: {"error":{...}}` event and the stream ends
// (the openai SDK throws on a chunk with an `error` key). The Responses API names each
// event instead (`event: response.created`), sends no [DONE], and ends a failure with an
// event of its own (`named`).
import { mapError } from './errors.js';

export interface SseOptions {
  /** Called once when the consumer cancels the body (the client went away). */
  onCancel?: () => void;
  /** Called once when the stream is over, however it ended. */
  onClose?: () => void;
  requestId?: string;
  headers?: Record<string, string>;
  /** Responses-style: each event named by its `type`, no [DONE]; `failed` makes the last event of a stream that failed. */
  named?: { failed: (err: unknown) => { type: string } };
  /** What the stream has delivered: `mark()` is read as each event is queued, and `sent(mark)`
   * hears it once the transport has taken that event and written it out (a crash record counts no more). */
  progress?: SseProgress;
  /** false: the stream ends without `data: [DONE]` (the audio routes' transcript events, as OpenAI sends them). */
  done?: boolean;
}

export interface SseProgress<M = unknown> {
  mark: () => M;
  sent: (mark: M) => void;
}

export type SseSend = (data: unknown) => void;

export const SSE_HEADERS: Record<string, string> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

const encoder = new TextEncoder();
const frame = (payload: string) => encoder.encode(`data: ${payload}\n\n`);
const namedFrame = (data: { type: string }) => encoder.encode(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);

/**
 * Runs `produce`, sending each object it passes to `send` as soon as it is passed. The stream
 * pulls when its queue is empty, that is when the transport has taken every event queued: then
 * `progress` hears the mark of the last one.
 */
export function sseResponse(produce: (send: SseSend) => Promise<void>, opts: SseOptions = {}): Response {
  let closed = false;
  let closeNotified = false;
  const notifyClose = () => {
    if (closeNotified) return;
    closeNotified = true;
    opts.onClose?.();
  };
  let mark: { value: unknown } | undefined; // the last queued event's, until it is taken

  const body = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const send: SseSend = (data) => {
          if (closed) return;
          if (opts.progress) mark = { value: opts.progress.mark() };
          controller.enqueue(opts.named ? namedFrame(data as { type: string }) : frame(JSON.stringify(data)));
        };
        const finish = (last?: Uint8Array) => {
          if (closed) return;
          closed = true;
          if (last) controller.enqueue(last);
          controller.close();
        };
        // Not awaited: start() must return so the first chunks can be read while we produce.
        void produce(send).then(
          () => {
            finish(opts.named || opts.done === false ? undefined : frame('[DONE]'));
            notifyClose();
          },
          (err: unknown) => {
            if (opts.named) {
              finish(closed ? undefined : namedFrame(opts.named.failed(err)));
            } else {
              const m = mapError(err, opts.requestId);
              finish(m ? frame(JSON.stringify(m.body)) : undefined);
            }
            notifyClose();
          },
        );
      },
      pull() {
        if (!mark) return;
        const { value } = mark;
        mark = undefined;
        // Heard a turn later: Node's http writes a chunk corked until the next tick, so a
        // crash record written now could count an event the socket never got.
        setTimeout(() => opts.progress!.sent(value), 0);
      },
      cancel() {
        closed = true;
        opts.onCancel?.();
        notifyClose();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...(opts.headers ?? {}) } });
}

/** Streams an async source as SSE: each item is one event. */
export function sseFromIterable(source: AsyncIterable<unknown>, opts: SseOptions = {}): Response {
  return sseResponse(async (send) => {
    for await (const item of source) send(item);
  }, opts);
}
