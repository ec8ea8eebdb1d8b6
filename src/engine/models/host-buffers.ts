// onnxruntime hands back every output of every run in a new buffer. On the CPU a decode step's
// outputs are the batch's whole cache (present.*) and its logits: at 16 rows of ~90 tokens of a
// 0.5B-shaped model with a 151,936-token vocabulary, about 23 MB a step. V8 frees such a buffer
// only when a major GC finds it dead, and counts it as external memory until then, so the old
// ones set off a mark-compact every few steps, each a walk of the whole heap (the tokenizer's
// included). Buffers the engine is done with and owns alone are detached instead
// (ArrayBuffer.prototype.transfer(0)), which frees their memory at once (docs/performance.md).

type Detachable = ArrayBuffer & { transfer?: (length: number) => ArrayBuffer; readonly detached?: boolean };

/**
 * Frees the memory of arrays nothing else reads: a batch's cache once a step has read it or a
 * repack has copied it, a step's logits once its rows are sampled. Never a sequence's own cache:
 * the prefix cache may hold it. An array that is a view of a larger buffer (one other views
 * may share), a SharedArrayBuffer, or a runtime without transfer (Node 20) is left to the GC.
 */
export function freeHostBuffers(arrays: readonly ArrayBufferView[] | null | undefined): void {
  for (const a of arrays ?? []) {
    const buffer = a.buffer as Detachable;
    if (typeof buffer.transfer !== 'function' || buffer.detached) continue;
    if (a.byteOffset !== 0 || a.byteLength !== buffer.byteLength) continue;
    buffer.transfer(0);
  }
}
