// The trial worker's side (see trial.ts): compiles each grammar it is sent with an XGrammar
// instance of its own, and says whether it could. A failure retires that instance, as in
// the engine, so one bad grammar never decides how the next one compiles.
import type { GrammarSpec } from '../protocol.js';
import { compileWith } from './compile.js';
import { createTokenizerInfo, type VocabInfo } from './tokenizer-info.js';
import { withReason, xgrammar, xgrammarGeneration, type GrammarCompiler } from './xgrammar.js';

export type TrialMessage =
  | { kind: 'vocab'; id: number; key: string; vocab: VocabInfo }
  | { kind: 'compile'; id: number; key: string; spec: GrammarSpec };

export type TrialReply = { id: number; ok: true } | { id: number; ok: false; reason: string } | { id: number; started: true };

/** `started(id)`: the compile itself begins now (an instance loaded after a failure is not part of its time). */
export function trialRunner(started: (id: number) => void = () => undefined): (m: TrialMessage) => Promise<TrialReply> {
  const vocabs = new Map<string, VocabInfo>();
  const compilers = new Map<string, { gen: number; compiler: Promise<GrammarCompiler> }>();

  const compilerFor = async (key: string): Promise<{ gen: number; compiler: GrammarCompiler }> => {
    const xg = await xgrammar();
    const gen = xgrammarGeneration();
    let c = compilers.get(key);
    if (!c || c.gen !== gen) {
      const vocab = vocabs.get(key);
      if (!vocab) throw new Error(`no vocabulary ${key}`);
      // No cache: a trial compiles each grammar once, and its result is thrown away.
      const compiler = createTokenizerInfo(xg, vocab, gen).then((info) => withReason(() => xg.GrammarCompiler.createGrammarCompiler(info, false), gen));
      compilers.set(key, (c = { gen, compiler }));
      compiler.catch(() => compilers.delete(key));
    }
    return { gen: c.gen, compiler: await c.compiler };
  };

  return async (m) => {
    try {
      if (m.kind === 'vocab') {
        vocabs.set(m.key, m.vocab);
        await compilerFor(m.key);
        return { id: m.id, ok: true };
      }
      const { gen, compiler } = await compilerFor(m.key);
      const xg = await xgrammar();
      started(m.id);
      const grammar = await withReason(() => compileWith(xg, compiler, m.spec), gen);
      grammar.dispose();
      return { id: m.id, ok: true };
    } catch (e) {
      return { id: m.id, ok: false, reason: e instanceof Error ? e.message : String(e) };
    }
  };
}
