// A failure inside XGrammar for one request cannot change what later requests get. XGrammar's
// WASM build leaks stack on every refusal (after about 60, every call fails with "memory access
// out of bounds") and a deep recursion corrupts it at once; the engine retires the instance
// after any failure and compiles the next grammar on a fresh one.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadXGrammarInNode } from '../../../src/backends/node-xgrammar.js';
import { EngineError } from '../../../src/engine/errors.js';
import type { GrammarSpec } from '../../../src/engine/protocol.js';
import { maskRows, type Constraint } from '../../../src/engine/structured/constraint.js';
import { Grammars } from '../../../src/engine/structured/grammars.js';
import { setXGrammarLoader, withReason, xgrammar } from '../../../src/engine/structured/xgrammar.js';
import { fixtures } from '../../helpers/fixtures.js';

let grammars: Grammars;
let vocab: Record<string, number>;

beforeAll(async () => {
  setXGrammarLoader(loadXGrammarInNode);
  const json = JSON.parse(readFileSync(join(await fixtures(), 'tiny-chat', 'tokenizer.json'), 'utf8'));
  vocab = json.model.vocab;
  grammars = new Grammars(json, 512, [2]);
});

const canary: GrammarSpec = { type: 'json_schema', schema: JSON.stringify({ type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] }), param: 'response_format' };

/** How many tokens each step of writing `text` allows, one character token at a time. */
async function masksAlong(spec: GrammarSpec, text: string): Promise<number[]> {
  const c = await grammars.constraint(spec);
  const counts: number[] = [];
  for (const ch of text) {
    const logits = new Float32Array(512);
    await c.mask(logits);
    counts.push(logits.filter((x) => x === 0).length);
    expect(c.accept(vocab[ch === ' ' ? 'Ġ' : ch === '\n' ? 'Ċ' : ch]!)).toBe(true);
  }
  c.dispose();
  return counts;
}

describe('a failure inside XGrammar', () => {
  it('leaves later grammars compiling and masking as before, after 100 refusals and a crash', async () => {
    const text = '{\n  "a":1';
    const regex: GrammarSpec = { type: 'regex', pattern: '[a-z]+', param: 'sampling_params.regex' };
    const before = await masksAlong(canary, text);
    const regexBefore = await masksAlong(regex, 'abc');
    for (let i = 0; i < 100; i++) {
      await expect(grammars.constraint({ type: 'ebnf', grammar: `root ::= ( "x${i}"`, param: 'sampling_params.ebnf' })).rejects.toMatchObject({
        code: 'invalid_value',
        param: 'sampling_params.ebnf',
      });
    }
    expect(await masksAlong(canary, text)).toEqual(before);
    // A recursion deep enough to overflow XGrammar's stack (what the limits keep out of it).
    const deep = '{"type":"object","properties":{"a":'.repeat(300) + '{}' + '}}'.repeat(300);
    await expect(withReason(async () => (await xgrammar()).Testings._jsonSchemaToEBNF(deep))).rejects.toThrow();
    expect(await masksAlong(canary, text)).toEqual(before);
    expect(await masksAlong(regex, 'abc')).toEqual(regexBefore);
  }, 120_000);

  it('fails only the generation whose matcher broke; the others in the step are masked as usual', async () => {
    const good = await grammars.constraint(canary);
    const bad = await grammars.constraint(canary);
    // Freed behind its back: its next call into XGrammar throws.
    (bad as unknown as { matcher: { dispose(): void } }).matcher.dispose();
    const failed: unknown[] = [];
    const rows: { constraint: Constraint; fail(e: unknown): void }[] = [
      { constraint: bad, fail: (e) => failed.push(e) },
      { constraint: good, fail: (e) => failed.push(e) },
    ];
    const logits = [new Float32Array(512), new Float32Array(512)];
    await maskRows(rows, logits);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toBeInstanceOf(EngineError);
    expect((failed[0] as EngineError).code).toBe('engine_crashed');
    expect(logits[1]!.filter((x) => x === 0).length).toBeGreaterThan(0);
    expect(logits[1]!.filter((x) => x === -Infinity).length).toBeGreaterThan(400);
    // Neither accepting after the failure nor disposing twice throws.
    expect(bad.accept(5)).toBe(false);
    expect(() => bad.dispose()).not.toThrow();
    good.dispose();
    expect(await masksAlong(canary, '{\n  "a":1')).toHaveLength(9);
  });
});
