// Where a decode step's present.* go when the backend lets the caller hand in output
// buffers (onnxruntime-node on the CPU). Without it onnxruntime allocates a fresh
// tensor per layer per step, as large as the whole batch cache, and touches every page
// of it anew: at 1,800 tokens that was about 3 ms of a 20 ms step on the bench model.
//
// Two sets of buffers, used in turn: a step reads its past from the set the previous
// step wrote and writes its present into the other, so a step never overwrites what it
// reads. A batch cache in the arena therefore lives until the step after next; whatever
// keeps a cache longer (the prefix cache, a repack) copies it first, as they already do.

import type { KvArray } from '../models/interface.js';

/** Buffers shrink when a step needs less than this share of them (a batch that emptied). */
const SHRINK_BELOW = 1 / 4;
/** Head room when a buffer grows, so a growing context does not reallocate every step. */
const GROW_BY = 1.5;

export class KvOutputArena {
  private readonly sets: ArrayBuffer[][] = [[], []];
  private turn = 0;

  /** `count` arrays of `elements` each, like `proto`, in the set the previous call did not use. */
  next(proto: KvArray, count: number, elements: number): KvArray[] {
    const set = this.sets[this.turn];
    this.turn = 1 - this.turn;
    const bytes = elements * proto.BYTES_PER_ELEMENT;
    const Ctor = proto.constructor as new (b: ArrayBuffer, offset: number, length: number) => KvArray;
    return Array.from({ length: count }, (_, i) => {
      let buf = set[i];
      if (!buf || buf.byteLength < bytes || bytes < buf.byteLength * SHRINK_BELOW) {
        buf = set[i] = new ArrayBuffer(Math.ceil((bytes * GROW_BY) / 8) * 8);
      }
      return new Ctor(buf, 0, elements);
    });
  }

  /** Lets the buffers go (the batch emptied, or the model unloads). */
  clear(): void {
    this.sets[0] = [];
    this.sets[1] = [];
  }
}
