// A grammar is compiled first where a compile that fails or runs too long harms no one:
// in Node, a worker thread with an XGrammar instance of its own, ended when a compile
// overruns its budget (node-trial.ts). Only what compiled there, in time, is compiled by
// the engine's own instance, whose matchers every structured generation shares. Where no
// trial is set (the browser's engine), grammars are compiled by the engine directly,
// after the same limits (limits.ts).
import type { GrammarSpec } from '../protocol.js';
import type { VocabInfo } from './tokenizer-info.js';

/** Why a trial refused a grammar: XGrammar's reason, or that it ran past the budget. */
export class TrialRefusal extends Error {
  override readonly name = 'TrialRefusal';
}

export interface GrammarTrial {
  /**
   * Compiles `spec` for the vocabulary `vocab()` describes (`key` names it: asked for only the
   * first time a worker meets that key). Resolves when it compiled within the budget; rejects
   * with a TrialRefusal when it cannot be used.
   */
  run(spec: GrammarSpec, key: string, vocab: () => VocabInfo): Promise<void>;
  /** Ends the worker(s). */
  close(): Promise<void>;
}

let current: GrammarTrial | undefined;

export function setGrammarTrial(trial: GrammarTrial | undefined): void {
  current = trial;
}

export function grammarTrial(): GrammarTrial | undefined {
  return current;
}
