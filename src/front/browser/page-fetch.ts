// The page's own fetch() answered in the page, before it reaches the service worker.
// Through MSW's service worker a response's head reaches the page's fetch 10 to 500 ms
// after the handler answered (three threads and two processes to schedule; as slow for
// /health as for a stream), while the fixture model writes its whole reply in 30 ms: a
// stream whose tokens were all produced before the page could read any arrived as one
// burst. Answered here, the reader holds the body the moment the first token is sent.
// The service worker still answers what this page's fetch does not carry (other
// documents, XMLHttpRequest, navigations).
import { FetchInterceptor } from '@mswjs/interceptors/fetch';
import { getResponse, type RequestHandler } from 'msw';

/** Patches the page's fetch; returns the undo. Requests no handler answers go on unchanged. */
export function answerPageFetch(handlers: RequestHandler[]): () => void {
  const interceptor = new FetchInterceptor();
  interceptor.on('request', async ({ request, controller }) => {
    const response = await getResponse(handlers, request);
    if (response) controller.respondWith(abortable(response, request.signal));
  });
  interceptor.apply();
  return () => interceptor.dispose();
}

/**
 * The interceptor stops listening to the request's signal once it has a response, so an
 * abort while the body streams would reach neither side: the reader would end as if the
 * reply were complete. Here it does what a network fetch does: the reader rejects with the
 * signal's reason (an AbortError), and the router's stream is cancelled, so the generation
 * stops. Clients tell a user's stop from a finished answer by that rejection.
 */
export function abortable(response: Response, signal: AbortSignal): Response {
  if (!response.body) return response;
  const source = response.body.getReader();
  const reason = () => signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
  let stop = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      stop = () => {
        controller.error(reason());
        source.cancel(reason()).catch(() => undefined);
      };
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    },
    async pull(controller) {
      const { done, value } = await source.read();
      if (signal.aborted) return; // errored by stop(): nothing more may be enqueued
      if (done) {
        signal.removeEventListener('abort', stop);
        controller.close();
      } else controller.enqueue(value);
    },
    cancel(why) {
      signal.removeEventListener('abort', stop);
      return source.cancel(why);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
