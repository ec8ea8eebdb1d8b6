// Grammars compiled once per (model, grammar) and kept while the model is loaded;
// each generation gets its own matcher over the shared compiled grammar.
import { EngineError } from '../errors.js';
import type { GrammarSpec } from '../protocol.js';
import { Constraint } from './constraint.js';
import { factorLiteralAlternatives } from './factor-literals.js';
import type { Utf8Filter } from './utf8.js';
import { createTokenizerInfo, type TokenizerJson } from './tokenizer-info.js';
import { withReason, xgrammar, type CompiledGrammar, type GrammarCompiler, type TokenizerInfo, type XGrammar } from './xgrammar.js';

/** Distinct grammars kept per model; the least recently used goes first. */
const CACHE_SIZE = 64;

export class Grammars {
  private compiler?: Promise<{ xg: XGrammar; compiler: GrammarCompiler; info: TokenizerInfo }>;
  private readonly compiled = new Map<string, Promise<CompiledGrammar>>();

  constructor(
    private readonly tokenizer: TokenizerJson,
    private readonly vocabSize: number,
    private readonly stopIds: number[],
    /** Keeps output well-formed UTF-8 under every grammar. */
    private readonly utf8?: Utf8Filter,
  ) {}

  /** A fresh matcher for one generation. A grammar that cannot compile → invalid_value naming `spec.param`. */
  async constraint(spec: GrammarSpec): Promise<Constraint> {
    const { xg } = await this.start();
    const grammar = await this.compile(spec);
    return new Constraint(await withReason(() => xg.GrammarMatcher.createGrammarMatcher(grammar)), this.utf8);
  }

  /** Frees XGrammar's memory for this model (its WASM heap is not garbage-collected). */
  async dispose(): Promise<void> {
    const started = this.compiler;
    this.compiler = undefined;
    const compiled = [...this.compiled.values()];
    this.compiled.clear();
    for (const g of await Promise.allSettled(compiled)) if (g.status === 'fulfilled') g.value.dispose();
    const s = await started?.catch(() => undefined);
    s?.compiler.dispose();
    s?.info.dispose();
  }

  private start() {
    this.compiler ??= (async () => {
      const xg = await xgrammar();
      const info = await createTokenizerInfo(xg, this.tokenizer, this.vocabSize, this.stopIds);
      return { xg, info, compiler: await xg.GrammarCompiler.createGrammarCompiler(info) };
    })();
    return this.compiler;
  }

  private compile(spec: GrammarSpec): Promise<CompiledGrammar> {
    const { param, ...grammar } = spec;
    const key = JSON.stringify(grammar);
    let hit = this.compiled.get(key);
    if (hit) {
      this.compiled.delete(key); // re-inserted below as the most recent
    } else {
      hit = this.start().then(({ compiler }) => withReason(() => compileWith(compiler, spec)));
      // A failed compile is not kept: the next request with it gets its own 400.
      hit.catch(() => this.compiled.delete(key));
    }
    this.compiled.set(key, hit);
    if (this.compiled.size > CACHE_SIZE) this.compiled.delete(this.compiled.keys().next().value!);
    return hit.catch((e: unknown) => {
      const why = e instanceof Error ? e.message : String(e);
      throw new EngineError('invalid_value', `The grammar in '${param}' cannot be used: ${why}`, param);
    });
  }
}

/** No free whitespace in JSON (a model could pad it forever): XGrammar fixes the layout. */
const JSON_OPTIONS: [boolean, undefined, [string, string]] = [false, undefined, [',', ':']];

async function compileWith(compiler: GrammarCompiler, spec: GrammarSpec): Promise<CompiledGrammar> {
  switch (spec.type) {
    case 'json_object':
      return compiler.compileJSONSchema(JSON.stringify({ type: 'object' }), ...JSON_OPTIONS, false);
    case 'json_schema':
      return compiler.compileGrammar(await schemaGrammar(spec.schema));
    case 'regex':
    case 'ebnf': {
      // Normalized first, so that nested alternatives become rules the workaround can factor.
      const xg = await xgrammar();
      const grammar =
        spec.type === 'regex'
          ? await xg.Grammar.fromStructuralTag({ type: 'structural_tag', format: { type: 'regex', pattern: spec.pattern } })
          : await xg.Grammar.fromEBNF(spec.grammar);
      const text = factorLiteralAlternatives(grammar.toString());
      grammar.dispose();
      return compiler.compileGrammar(text);
    }
    case 'structural_tag':
      return compiler.compileStructuralTag(await compactSchemas(spec.tag));
  }
}

/** Structural tags' json_schema contents allow free whitespace; their schemas are
 * compiled here into grammars with XGrammar's compact JSON layout instead. */
async function compactSchemas(tag: string): Promise<string> {
  const xg = await xgrammar();
  const out: unknown = JSON.parse(tag);
  const visit = async (node: unknown): Promise<void> => {
    if (Array.isArray(node)) for (const x of node) await visit(x);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (o.type === 'json_schema' && o.json_schema !== undefined) {
        o.grammar = await schemaGrammar(JSON.stringify(o.json_schema));
        o.type = 'grammar';
        delete o.json_schema;
      } else for (const v of Object.values(o)) await visit(v);
    }
  };
  await visit(out);
  return JSON.stringify(out);
}

/**
 * A JSON schema as XGrammar's EBNF, with two repairs for XGrammar 0.1.27: enum and const
 * alternatives are factored (see factor-literals.ts), and strings with minLength/maxLength,
 * written as `[^"\\\r\n]{m,n}`, which lets raw control characters through (invalid
 * JSON), exclude them as its unbounded strings do.
 */
async function schemaGrammar(schema: string): Promise<string> {
  const xg = await xgrammar();
  const ebnf = factorLiteralAlternatives(await xg.Testings._jsonSchemaToEBNF(schema, ...JSON_OPTIONS));
  return ebnf.replaceAll('[^"\\\\\\r\\n]{', '[^"\\\\\\0-\\x1f]{');
}
