// A GrammarSpec compiled by one XGrammar instance: the same steps in the engine and in the
// trial worker (trial.ts), so that what passed the trial is what the engine compiles.
import type { GrammarSpec } from '../protocol.js';
import { factorLiteralAlternatives } from './factor-literals.js';
import type { CompiledGrammar, GrammarCompiler, XGrammar } from './xgrammar.js';

/** No free whitespace in JSON (a model could pad it forever): XGrammar fixes the layout. Its
 * members one per line, indented by two spaces (XGrammar's JS binding reads an indent left
 * undefined as 2): `{\n  "city":"Paris"\n}`. */
const JSON_OPTIONS: [boolean, undefined, [string, string]] = [false, undefined, [',', ':']];
/** A tool call's arguments in the layout chat templates write calls in (`tojson`, Python's
 * json.dumps: one line, `, ` and `: `), as the call's own head is (`{"name": "f", "arguments": `):
 * `{"city": "Paris"}`, the spelling the model was trained on and no newlines or indentation to
 * spend tokens on. An indent of -1 is the binding's "none". */
const CALL_OPTIONS: [boolean, number, [string, string]] = [false, -1, [', ', ': ']];

export async function compileWith(xg: XGrammar, compiler: GrammarCompiler, spec: GrammarSpec): Promise<CompiledGrammar> {
  switch (spec.type) {
    case 'json_object':
      return compiler.compileJSONSchema(JSON.stringify({ type: 'object' }), ...JSON_OPTIONS, false);
    case 'json_schema':
      return compileEbnf(xg, compiler, await schemaGrammar(xg, spec.schema));
    case 'regex':
    case 'ebnf': {
      // Normalized first, so that nested alternatives become rules the workaround can factor.
      const grammar =
        spec.type === 'regex'
          ? await xg.Grammar.fromStructuralTag({ type: 'structural_tag', format: { type: 'regex', pattern: spec.pattern } })
          : await xg.Grammar.fromEBNF(spec.grammar);
      const text = factorLiteralAlternatives(grammar.toString());
      grammar.dispose();
      return compileEbnf(xg, compiler, text);
    }
    case 'structural_tag':
      return compiler.compileStructuralTag(await compactSchemas(xg, spec.tag));
  }
}

/** EBNF text compiled. Not compiler.compileGrammar(text): it parses the text into a Grammar that it
 * never frees, and XGrammar's WASM heap is not garbage-collected (every compile would stay there). */
async function compileEbnf(xg: XGrammar, compiler: GrammarCompiler, text: string): Promise<CompiledGrammar> {
  const grammar = await xg.Grammar.fromEBNF(text);
  try {
    return await compiler.compileGrammar(grammar);
  } finally {
    grammar.dispose();
  }
}

/** Structural tags' json_schema contents allow free whitespace; their schemas are compiled here
 * into grammars of a fixed layout instead: a tag's content (a tool call's arguments) in the
 * calls' layout, any other (a response_format's JSON beside the calls) in response_format's. */
async function compactSchemas(xg: XGrammar, tag: string): Promise<string> {
  const out: unknown = JSON.parse(tag);
  const visit = async (node: unknown, inTag: boolean): Promise<void> => {
    if (Array.isArray(node)) for (const x of node) await visit(x, false);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (o.type === 'json_schema' && o.json_schema !== undefined) {
        o.grammar = await schemaGrammar(xg, JSON.stringify(o.json_schema), inTag ? CALL_OPTIONS : JSON_OPTIONS);
        o.type = 'grammar';
        delete o.json_schema;
      } else for (const [k, v] of Object.entries(o)) await visit(v, o.type === 'tag' && k === 'content');
    }
  };
  await visit(out, false);
  return JSON.stringify(out);
}

/**
 * A JSON schema as XGrammar's EBNF, with two repairs for XGrammar 0.1.27: enum and const
 * alternatives are factored (see factor-literals.ts), and strings with minLength/maxLength,
 * written as `[^"\\\r\n]{m,n}`, which lets raw control characters through (invalid
 * JSON), exclude them as its unbounded strings do.
 */
async function schemaGrammar(xg: XGrammar, schema: string, options: [boolean, number | undefined, [string, string]] = JSON_OPTIONS): Promise<string> {
  const ebnf = factorLiteralAlternatives(await xg.Testings._jsonSchemaToEBNF(schema, ...options));
  return ebnf.replaceAll('[^"\\\\\\r\\n]{', '[^"\\\\\\0-\\x1f]{');
}

/** Whether a mask from getNextTokenBitmask allows any token at all (the end of output included). */
export function allowsAny(bits: Int32Array, vocabSize: number): boolean {
  const words = Math.ceil(vocabSize / 32);
  for (let w = 0; w < words && w < bits.length; w++) if (bits[w] !== 0) return true;
  return false;
}
