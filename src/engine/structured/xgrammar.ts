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

export function setXGrammarLoader(load: () => Promise<XGrammar>): void {
  loader = load;
  loaded = undefined;
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

/** Runs an XGrammar call; a failure is rethrown with XGrammar's own reason. Calls run one
 * at a time (the work is synchronous WASM anyway), so each captures only its own lines. */
export function withReason<T>(fn: () => Promise<T>): Promise<T> {
  const run = async () => {
    const lines: string[] = [];
    captured = lines;
    try {
      return await fn();
    } catch (e) {
      const fatal = lines.find((l) => l.includes('[FATAL]'));
      const why = fatal ? fatal.replace(/^.*\[FATAL\][^:]*:\d+:\s*/, '') : e instanceof Error ? e.message : String(e);
      throw new Error(why);
    } finally {
      captured = null;
    }
  };
  const next = queue.then(run, run);
  queue = next.catch(() => undefined);
  return next;
}
