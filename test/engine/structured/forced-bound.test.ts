// Which grammars' forced text is short in every state, read from the grammars as XGrammar prints
// them: XGrammar's jump-forward walks a forced text whole and without a limit (it aborts the WASM
// module on a rule that can never end), so Hearth asks for it only where it is bounded.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadXGrammarInNode } from '../../../src/backends/node-xgrammar.js';
import { toolCallGrammar } from '../../../src/api/tools/syntax.js';
import { jumpForwardIsBounded } from '../../../src/engine/structured/forced-bound.js';
import type { XGrammar } from '../../../src/engine/structured/index.js';

let xg: XGrammar;

async function printed(make: () => ReturnType<XGrammar['Grammar']['fromEBNF']>): Promise<string> {
  const g = await make();
  try {
    return g.toString();
  } finally {
    g.dispose();
  }
}
const schema = async (s: unknown) => printed(async () => xg.Grammar.fromEBNF(await xg.Testings._jsonSchemaToEBNF(JSON.stringify(s), false, undefined, [',', ':'])));
const ebnf = (text: string) => printed(() => xg.Grammar.fromEBNF(text));
const regex = (pattern: string) => printed(() => xg.Grammar.fromStructuralTag({ type: 'structural_tag', format: { type: 'regex', pattern } }));

beforeAll(async () => {
  xg = await loadXGrammarInNode();
});

describe("a grammar's forced text", () => {
  it('is bounded in the tool-call grammars of every syntax and mode, and in JSON that nests freely', async () => {
    const params = { type: 'object', properties: { city: { type: 'string', minLength: 2, maxLength: 5 }, unit: { enum: ['c', 'f'] }, extra: {} } };
    for (const syntax of ['hermes', 'llama3_json', 'mistral'] as const) {
      for (const mode of ['auto', 'required'] as const) {
        const spec = toolCallGrammar([{ name: 'get_weather', parameters: params }, { name: 'ping' }], mode, true, syntax);
        if (spec.type !== 'structural_tag') throw new Error('a tool grammar is a structural tag');
        expect(jumpForwardIsBounded(await printed(() => xg.Grammar.fromStructuralTag(JSON.parse(spec.tag) as never)))).toBe(true);
      }
    }
    expect(jumpForwardIsBounded(await schema({ type: 'object', properties: { a: { $ref: '#' } } }))).toBe(true);
    expect(jumpForwardIsBounded(await regex('(ab|cd){2,4}x+[a-z]?\\d{3}'))).toBe(true);
  });

  it('is unbounded where a rule can never end: a required property or first item that is the schema itself, a rule that only recurses', async () => {
    expect(jumpForwardIsBounded(await schema({ type: 'object', properties: { a: { $ref: '#' } }, required: ['a'] }))).toBe(false);
    expect(jumpForwardIsBounded(await schema({ type: 'array', prefixItems: [{ $ref: '#' }] }))).toBe(false);
    expect(jumpForwardIsBounded(await ebnf('root ::= "a" root'))).toBe(false);
    expect(jumpForwardIsBounded(await ebnf('root ::= "a" root | "b"'))).toBe(true);
  });

  it('counts as unbounded where one sequence needs more than the cap to end', async () => {
    expect(jumpForwardIsBounded(await regex('a{5000}'))).toBe(false);
    expect(jumpForwardIsBounded(await regex('a{5000}'), 10_000)).toBe(true);
    expect(jumpForwardIsBounded(await schema({ type: 'array', items: { const: 'x'.repeat(100) }, minItems: 100 }))).toBe(false);
  });

  it('counts as unbounded what it cannot read', () => {
    expect(jumpForwardIsBounded('')).toBe(false);
    expect(jumpForwardIsBounded('root ::= ("a" | "b"')).toBe(false);
    expect(jumpForwardIsBounded('root ::= other')).toBe(false);
    expect(jumpForwardIsBounded('root ::= "a" @ "b"')).toBe(false);
  });
});
