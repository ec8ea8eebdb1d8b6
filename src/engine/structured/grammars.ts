// Grammars compiled once per (model, grammar) and kept while the model is loaded;
// each generation gets its own matcher over the shared compiled grammar.
import { EngineError } from '../errors.js';
import type { GrammarSpec } from '../protocol.js';
import { allowsAny, compileWith } from './compile.js';
import { Constraint } from './constraint.js';
import { checkGrammarSpec } from './limits.js';
import { grammarTrial } from './trial.js';
import type { Encode } from './forced.js';
import { jumpForwardIsBounded } from './forced-bound.js';
import type { Utf8Filter } from './utf8.js';
import { createTokenizerInfo, vocabInfo, type TokenizerJson, type VocabInfo } from './tokenizer-info.js';
import {
  retireXGrammar,
  withReason,
  xgrammar,
  xgrammarGeneration,
  type CompiledGrammar,
  type GrammarCompiler,
  type GrammarMatcher,
  type TokenizerInfo,
  type XGrammar,
} from './xgrammar.js';

/** Distinct grammars kept per model; the least recently used goes first (and is freed). */
export const GRAMMAR_CACHE_SIZE = 64;
const CACHE_SIZE = GRAMMAR_CACHE_SIZE;

interface Started {
  xg: XGrammar;
  compiler: GrammarCompiler;
  info: TokenizerInfo;
  /** The XGrammar instance these belong to. */
  gen: number;
}

let nextKey = 0;

export class Grammars {
  private compiler?: Promise<Started>;
  private compilerGen = -1;
  /** Compiled grammars, each with the instance it lives in (a matcher must come from the same one). */
  private readonly compiled = new Map<string, Cached>();
  /** Names this vocabulary to a trial worker. */
  private readonly key = `vocab-${nextKey++}`;
  private vocab?: VocabInfo;

  constructor(
    private readonly tokenizer: TokenizerJson,
    private readonly vocabSize: number,
    private readonly stopIds: number[],
    /** Keeps output well-formed UTF-8 under every grammar. */
    private readonly utf8?: Utf8Filter,
    /** The model's tokenizer, for text a grammar forces (see forced.ts). */
    private readonly encode?: Encode,
  ) {}

  /**
   * A fresh matcher for one generation. A grammar over a limit, one that cannot compile, or one
   * that matches nothing at all → invalid_value naming `spec.param`.
   */
  async constraint(spec: GrammarSpec): Promise<Constraint> {
    checkGrammarSpec(spec);
    const cached = this.compile(spec);
    // Held until its matcher exists: a grammar pushed out of the cache meanwhile is freed after that
    // (a matcher keeps what it needs of its grammar, so freeing it later harms no matcher).
    cached.users++;
    let matcher: GrammarMatcher;
    let gen: number;
    let forcedText: boolean;
    try {
      const c = await cached.compiled.catch((e: unknown) => {
        throw cannotUse(spec.param, e);
      });
      gen = c.gen;
      forcedText = c.boundedJumpForward;
      matcher = await withReason(() => c.xg.GrammarMatcher.createGrammarMatcher(c.grammar), gen).catch((e: unknown) => {
        throw cannotUse(spec.param, e);
      });
    } finally {
      cached.users--;
      if (cached.evicted) free(cached);
    }
    let first: Int32Array;
    try {
      first = await matcher.getNextTokenBitmask();
    } catch (e) {
      retireXGrammar(gen);
      throw cannotUse(spec.param, e);
    }
    if (!allowsAny(first, this.vocabSize)) {
      matcher.dispose();
      // `root ::= root`: no text, not even an empty one, is ever complete.
      throw new EngineError('invalid_value', `The grammar in '${spec.param}' cannot be used: it matches no output at all.`, spec.param);
    }
    return new Constraint(matcher, this.utf8, gen, this.vocabSize, forcedText ? this.encode : undefined);
  }

  /** Grammars in the cache now (at most GRAMMAR_CACHE_SIZE). */
  get cached(): number {
    return this.compiled.size;
  }

  /** Frees XGrammar's memory for this model (its WASM heap is not garbage-collected). */
  async dispose(): Promise<void> {
    const started = this.compiler;
    this.compiler = undefined;
    const compiled = [...this.compiled.values()].map((c) => c.compiled);
    this.compiled.clear();
    const s = await started?.catch(() => undefined);
    // A retired instance may be broken: what it holds goes with it, unfreed.
    if (!s || s.gen !== xgrammarGeneration()) return;
    for (const g of await Promise.allSettled(compiled)) if (g.status === 'fulfilled' && g.value.gen === s.gen) g.value.grammar.dispose();
    s.compiler.dispose();
    s.info.dispose();
  }

  private vocabInfo(): VocabInfo {
    return (this.vocab ??= vocabInfo(this.tokenizer, this.vocabSize, this.stopIds));
  }

  /** The compiler of the current XGrammar instance (made again, with an empty cache, after it was retired). */
  private start(): Promise<Started> {
    const gen = xgrammarGeneration();
    if (this.compilerGen !== gen) {
      this.compiler = undefined;
      this.compiled.clear();
      this.compilerGen = gen;
    }
    if (!this.compiler) {
      const started = (async () => {
        const xg = await xgrammar();
        const at = xgrammarGeneration();
        const info = await createTokenizerInfo(xg, this.vocabInfo(), at);
        // Without XGrammar's own cache: it keeps every grammar ever compiled, with no bound, in a
        // heap that never shrinks. The cache here (CACHE_SIZE, freed as it goes) stands in for it.
        const compiler = await withReason(() => xg.GrammarCompiler.createGrammarCompiler(info, false), at);
        return { xg, info, compiler, gen: at };
      })();
      this.compiler = started;
      // A failed start is not kept: the next request starts again (on a fresh instance).
      started.catch(() => {
        if (this.compiler === started) this.compiler = undefined;
      });
    }
    return this.compiler;
  }

  /** The cache entry for `spec` (compiling it when it is not there), now the most recently used. */
  private compile(spec: GrammarSpec): Cached {
    const key = JSON.stringify({ ...spec, param: undefined }); // the same grammar whichever field it came in
    if (this.compilerGen !== xgrammarGeneration()) this.compiled.clear();
    let hit = this.compiled.get(key);
    if (hit) {
      this.compiled.delete(key); // re-inserted below as the most recent
    } else {
      const entry: Cached = (hit = { compiled: this.compileNew(spec), users: 0, evicted: false });
      // A failed compile is not kept: the next request with it gets its own 400.
      entry.compiled.catch(() => {
        if (this.compiled.get(key) === entry) this.compiled.delete(key);
      });
    }
    this.compiled.set(key, hit);
    if (this.compiled.size > CACHE_SIZE) {
      const [oldest, out] = this.compiled.entries().next().value!;
      this.compiled.delete(oldest);
      out.evicted = true;
      free(out);
    }
    return hit;
  }

  private async compileNew(spec: GrammarSpec): Promise<Compiled> {
    const trial = grammarTrial();
    await trial?.run(spec, this.key, () => this.vocabInfo());
    const once = async () => {
      const { xg, compiler, gen } = await this.start();
      const grammar = await withReason(() => compileWith(xg, compiler, spec), gen);
      const text = await withReason(async () => {
        const g = grammar.grammar();
        try {
          return g.toString();
        } finally {
          g.dispose();
        }
      }, gen);
      return { grammar, xg, gen, boundedJumpForward: jumpForwardIsBounded(text) };
    };
    // What compiled in the trial compiles here too, unless this instance was already broken
    // (it has been retired by the failure): then once more, on a fresh one.
    return trial ? once().catch(once) : once();
  }
}

interface Compiled {
  grammar: CompiledGrammar;
  xg: XGrammar;
  gen: number;
  /** Whether its text forced in any state is short enough to ask XGrammar for (see forced-bound.ts). */
  boundedJumpForward: boolean;
}

/** A cache entry: the compile, and the constraint() calls still waiting to make a matcher from it. */
interface Cached {
  compiled: Promise<Compiled>;
  users: number;
  /** Out of the cache: freed once no one waits on it. */
  evicted: boolean;
  freed?: true;
}

/** Frees a grammar that left the cache, once no constraint() still needs it. XGrammar's heap is
 * not garbage-collected: a grammar dropped without this stays there for the instance's life. */
function free(c: Cached): void {
  if (c.users > 0 || c.freed) return;
  c.freed = true;
  void c.compiled.then(
    ({ grammar, gen }) => {
      // A retired instance may be broken: what it holds goes with it, unfreed.
      if (gen !== xgrammarGeneration()) return;
      try {
        grammar.dispose();
      } catch {
        retireXGrammar(gen);
      }
    },
    () => undefined,
  );
}

function cannotUse(param: string, e: unknown): EngineError {
  if (e instanceof EngineError) return e;
  const why = e instanceof Error ? e.message : String(e);
  return new EngineError('invalid_value', `The grammar in '${param}' cannot be used: ${why}`, param);
}
