// The workaround for XGrammar 0.1.27's enum bug: alternatives such as ("aa" | "a")
// also accept "aaa"; factored into a trie they accept exactly the listed values.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadXGrammarInNode } from '../../../src/backends/node-xgrammar.js';
import { factorLiteralAlternatives } from '../../../src/engine/structured/factor-literals.js';
import { encodedVocab } from '../../../src/engine/structured/tokenizer-info.js';
import { Grammars } from '../../../src/engine/structured/grammars.js';
import { setXGrammarLoader, type GrammarCompiler, type XGrammar } from '../../../src/engine/structured/index.js';
import type { GrammarSpec } from '../../../src/engine/protocol.js';
import { fixtures } from '../../helpers/fixtures.js';

let xg: XGrammar;
let compiler: GrammarCompiler;
let json: { model: { vocab: Record<string, number> } };

beforeAll(async () => {
  xg = await loadXGrammarInNode();
  json = JSON.parse(readFileSync(join(await fixtures(), 'tiny-chat', 'tokenizer.json'), 'utf8'));
  const info = await xg.TokenizerInfo.createTokenizerInfo(encodedVocab(json, 512), 'byte_level', false, 512, [511]);
  compiler = await xg.GrammarCompiler.createGrammarCompiler(info);
});

async function accepts(ebnf: string, text: string): Promise<boolean> {
  const m = await xg.GrammarMatcher.createGrammarMatcher(await compiler.compileGrammar(ebnf));
  return m._acceptString(text);
}

const enumGrammar = async (values: string[]) =>
  xg.Testings._jsonSchemaToEBNF(JSON.stringify({ type: 'object', properties: { k: { enum: values } }, required: ['k'] }), false, undefined, [',', ':']);
const doc = (v: string) => `{\n  "k":"${v}"\n}`;

describe('enum alternatives under XGrammar 0.1.27', () => {
  it('are over-permissive as XGrammar writes them (drop the workaround once this fails)', async () => {
    expect(await accepts(await enumGrammar(['aa', 'a']), doc('aaa'))).toBe(true);
  });

  it('accept exactly the listed values once factored', async () => {
    for (const values of [['aa', 'a'], ['redd', 'red'], ['bb', 'b', 'ab'], ['aa', 'aab', 'a']]) {
      const ebnf = factorLiteralAlternatives(await enumGrammar(values));
      for (const v of ['a', 'aa', 'aaa', 'aab', 'ab', 'b', 'bb', 'bbb', 'red', 'redd', 'reddd']) {
        expect(await accepts(ebnf, doc(v)), `${values} / ${v}`).toBe(values.includes(v));
      }
    }
  });

  it('keep escapes whole when factoring', () => {
    expect(factorLiteralAlternatives(String.raw`x ::= ("\"a\\b\"") | ("\"a\u00e9\"") | ("\"ab\"")`)).toBe(
      String.raw`x ::= "\"a" ("\\b\"" | "\u00e9\"" | "b\"")`,
    );
  });
});

describe('regex and ebnf alternatives, as the engine compiles them', () => {
  it('accept exactly what they say', async () => {
    setXGrammarLoader(loadXGrammarInNode);
    const grammars = new Grammars(json as never, 512, [511]);
    // Byte-level: printable ASCII tokens are spelled as themselves, a space as Ġ.
    const accepts = async (spec: GrammarSpec, text: string) => {
      const c = await grammars.constraint(spec);
      const ok = [...text].every((ch) => c.accept(json.model.vocab[ch === ' ' ? 'Ġ' : ch]!));
      c.dispose();
      return ok;
    };
    const regex = { type: 'regex', pattern: 'x(redd|red)y', param: 'regex' } as const;
    const ebnf = { type: 'ebnf', grammar: 'root ::= "(" item ("," item)? ")"\nitem ::= "redd" | "red"', param: 'ebnf' } as const;
    expect(await accepts(regex, 'xreddy')).toBe(true);
    expect(await accepts(regex, 'xredy')).toBe(true);
    expect(await accepts(regex, 'xredddy')).toBe(false);
    expect(await accepts(ebnf, '(red,redd)')).toBe(true);
    expect(await accepts(ebnf, '(reddd)')).toBe(false);
    expect(await accepts({ type: 'regex', pattern: '(yes|no), [0-9]{2}', param: 'regex' }, 'no, 42')).toBe(true);
  });
});
