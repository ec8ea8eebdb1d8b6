// XGrammar's WASM build, loaded once per worker. Its package is a UMD file marked
// `"type": "module"`: bundlers (Vite, in the browser worker) turn it into ESM, but
// Node's ESM loader cannot run it (it calls `require` and `__filename`), so the Node
// backend supplies its own loader (backends/node.ts) through `setXGrammarLoader`.
import type * as XG from '@mlc-ai/web-xgrammar';

export type XGrammar = typeof XG;
export type { CompiledGrammar, GrammarCompiler, GrammarMatcher, StructuralTag, TokenizerInfo } from '@mlc-ai/web-xgrammar';

let loader: () => Promise<XGrammar> = async () => {
  const mod = (await import('@mlc-ai/web-xgrammar')) as XGrammar & { default?: XGrammar };
  return mod.GrammarCompiler ? mod : (mod.default ?? (globalThis as { xgrammar?: XGrammar }).xgrammar!);
};
let loaded: Promise<XGrammar> | undefined;
/** Counts the instances retired so far: whatever was made with an older one is not used again. */
let generation = 0;

export function setXGrammarLoader(load: () => Promise<XGrammar>): void {
  loader = load;
  loaded = undefined;
  generation++;
}

/**
 * Which instance xgrammar() returns now. A failed call can leave XGrammar's WASM module
 * broken for every later call (a stack overflow is not caught, and an abort leaves its
 * stack pointer where it stopped), so after any failure the instance is retired and the
 * next call loads a fresh one (Node's loader compiles a new module each time; about 40 ms).
 */
export function xgrammarGeneration(): number {
  return generation;
}

/** Stops handing out the instance of `gen` (no-op when a newer one is already in use). */
export function retireXGrammar(gen: number): void {
  if (gen !== generation) return;
  loaded = undefined;
  generation++;
}

/** XGrammar reports why a compile failed only on stderr (then aborts the call with
 * "Aborted()"); its printer is bound to console.error when the module starts, so a
 * relay installed before that start lets a failing call capture the reason. */
let captured: string[] | null = null;

export function xgrammar(): Promise<XGrammar> {
  loaded ??= (async () => {
    const original = console.error;
    console.error = (...args: unknown[]) => (captured ? captured.push(args.join(' ')) : original.apply(console, args));
    try {
      const xg = await loader();
      // The WASM module starts on the first call; make that call while the relay is in place.
      (await xg.TokenizerInfo.createTokenizerInfo([''], 'raw', false, 1, [])).dispose();
      return xg;
    } finally {
      console.error = original;
    }
  })();
  return loaded;
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs an XGrammar call; a failure is rethrown with XGrammar's own reason, and retires the
 * instance the call ran on (`gen`: the one its objects came from). Calls run one at a time (the work is synchronous WASM anyway), so
 * each captures only its own lines. */
export function withReason<T>(fn: () => Promise<T>, gen = generation): Promise<T> {
  const run = async () => {
    const lines: string[] = [];
    captured = lines;
    try {
      return await fn();
    } catch (e) {
      retireXGrammar(gen);
      throw new Error(reasonOf(e, lines));
    } finally {
      captured = null;
    }
  };
  const next = queue.then(run, run);
  queue = next.catch(() => undefined);
  return next;
}

/** XGrammar's own words for a failure: its [FATAL] line when it printed one. */
export function reasonOf(e: unknown, lines: string[]): string {
  const fatal = lines.find((l) => l.includes('[FATAL]'));
  return fatal ? fatal.replace(/^.*\[FATAL\][^:]*:\d+:\s*/, '') : e instanceof Error ? e.message : String(e);
}
