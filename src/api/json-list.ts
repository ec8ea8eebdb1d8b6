// A list reply (`{"object":"list","data":[…],…}`) written a few items at a time, as the client
// reads. 2,048 embeddings of 1,536 floats are 67 MB of JSON: built as one string (and its UTF-8
// copy) they took hundreds of MiB of the JS heap for a moment, and V8 kept the heap it had grown
// to until a later collection, which an idle server may not run for minutes (issue 31). Each
// chunk here is garbage as soon as it is written, and the young generation takes it back.
const encoder = new TextEncoder();

/** Items per chunk: 16 embeddings of 1,536 floats are about half a megabyte of JSON. */
const ITEMS_PER_CHUNK = 16;

/**
 * The same bytes as `JSON.stringify({ object: 'list', data, ...rest })` with `data[i] = item(i)`,
 * as a stream that makes each chunk only when the client has taken the one before.
 */
export function jsonListResponse(count: number, item: (i: number) => unknown, rest: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  let next = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        const parts: string[] = next === 0 ? ['{"object":"list","data":['] : [];
        for (const end = Math.min(count, next + ITEMS_PER_CHUNK); next < end; next++) parts.push((next > 0 ? ',' : '') + JSON.stringify(item(next)));
        if (next === count) {
          const tail = JSON.stringify(rest).slice(1); // `"model":…}` or `}`
          parts.push(tail === '}' ? ']}' : `],${tail}`);
        }
        controller.enqueue(encoder.encode(parts.join('')));
        if (next === count) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(body, { status: 200, headers: { 'content-type': 'application/json', ...headers } });
}
