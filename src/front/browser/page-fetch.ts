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
    if (response) controller.respondWith(response);
  });
  interceptor.apply();
  return () => interceptor.dispose();
}
