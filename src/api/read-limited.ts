// A request or response body read whole, but never past a limit: a chunked body announces no
// length (and a client can lie), so the limit is held as the chunks arrive and the stream is
// cancelled the moment it is passed.
/**
 * The stream's bytes. `check` sees the running total and each chunk as it arrives; the error it
 * returns cancels the stream and is thrown.
 */
export async function readLimited(stream: ReadableStream<Uint8Array>, check: (total: number, chunk: Uint8Array) => Error | undefined): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    const over = check(total, value);
    if (over) {
      void reader.cancel().catch(() => {});
      throw over;
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
