/** Lets queued messages (new requests, cancels) in between two model steps.
 * setImmediate in Node; a MessageChannel hop in browsers, where setTimeout(0) is clamped. */
export function yieldToEventLoop(): Promise<void> {
  if (typeof setImmediate === 'function') return new Promise((r) => setImmediate(r));
  return new Promise((r) => {
    const ch = new MessageChannel();
    ch.port1.onmessage = () => {
      ch.port1.close();
      r();
    };
    ch.port2.postMessage(null);
  });
}
