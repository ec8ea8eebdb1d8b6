// After a model is unloaded, its JavaScript side (the graph bytes edited at load, tokenizer
// tables, host KV arrays) is garbage that V8 may keep for a long while: an idle server runs no
// allocations that would start a collection, so RSS stays up long after the sessions are gone.
// An unload is rare and already slow, so one full collection then is cheap, and it returns that
// memory within the contract's 10 s. `--expose-gc` is set for this thread's isolate at run time
// (V8 allows it before the first use), so nothing needs starting with a flag.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | null | undefined;

/** A full garbage collection of this thread's heap, where the runtime allows one (else nothing). */
export function collectGarbage(): void {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    } catch {
      gc = null;
    }
  }
  gc?.();
}
