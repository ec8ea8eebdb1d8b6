// The limits a schema or grammar is held to before any of it reaches XGrammar: each refusal
// is invalid_value naming the field and the limit, and nothing else is ever thrown.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EngineError } from '../../../src/engine/errors.js';
import type { GrammarSpec } from '../../../src/engine/protocol.js';
import { checkGrammarSpec, checkSchema, GRAMMAR_LIMITS as L } from '../../../src/engine/structured/limits.js';

const schema = (s: unknown, param = 'response_format'): GrammarSpec => ({ type: 'json_schema', schema: typeof s === 'string' ? s : JSON.stringify(s), param });
const nestedProps = (depth: number) => '{"type":"object","properties":{"a":'.repeat(depth) + '{"type":"string"}' + '}}'.repeat(depth);

/** The refusal `spec` gets, or undefined when it passes. */
function refusal(spec: GrammarSpec): EngineError | undefined {
  try {
    checkGrammarSpec(spec);
    return undefined;
  } catch (e) {
    expect(e).toBeInstanceOf(EngineError);
    return e as EngineError;
  }
}

function expectRefused(spec: GrammarSpec, ...words: (string | RegExp)[]): void {
  const e = refusal(spec);
  expect(e, `${JSON.stringify(spec).slice(0, 120)} should be refused`).toBeDefined();
  expect(e!.code).toBe('invalid_value');
  expect(e!.param).toBe(spec.param);
  expect(e!.message).toContain(spec.param);
  for (const w of words) expect(e!.message).toMatch(w);
}

describe('grammar limits', () => {
  it('refuse a schema string of 600 KB nested 100,000 deep by its size, before parsing it', () => {
    const deep = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
    expectRefused(schema(deep, 'sampling_params.json_schema'), String(L.maxChars), /characters/);
  });

  it('refuse schemas nested 3,000, 5,000 and 400 levels by their depth, naming the limit', () => {
    for (const depth of [3_000, 5_000, 400]) {
      const text = nestedProps(depth);
      const spec = text.length > L.maxChars ? undefined : schema(text);
      if (spec) expectRefused(spec, String(L.maxSchemaDepth), /nested/);
      // As an object (a response_format or a tool's parameters), depth is what is checked first.
      expect(() => checkSchema(JSON.parse(text), 'tools[0].function.parameters')).toThrow(/nested more than 32 levels/);
    }
  });

  it('let schemas as deep as real ones pass', () => {
    expect(refusal(schema(nestedProps(15)))).toBeUndefined();
    const items = '{"type":"array","items":'.repeat(30) + '{"type":"integer"}' + '}'.repeat(30);
    expect(refusal(schema(items))).toBeUndefined();
  });

  it('refuse $ref cycles that never go a value deeper: #, two $defs naming each other, through allOf', () => {
    expectRefused(schema({ $ref: '#' }), /\$ref cycle/);
    expectRefused(schema({ $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' }), /\$ref cycle/);
    expectRefused(schema({ allOf: [{ $ref: '#' }] }), /\$ref cycle/);
    expectRefused(schema({ anyOf: [{ type: 'string' }, { $ref: '#/anyOf/1' }] }), /\$ref cycle/);
  });

  it('let recursion through properties and items pass (trees, linked lists)', () => {
    const tree = { type: 'object', properties: { value: { type: 'integer' }, children: { type: 'array', items: { $ref: '#' } } } };
    expect(refusal(schema(tree))).toBeUndefined();
    const list = { $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, $ref: '#/$defs/node' };
    expect(refusal(schema(list))).toBeUndefined();
    expect(refusal(schema({ $defs: { 'a/b': { type: 'string' } }, $ref: '#/$defs/a~1b' }))).toBeUndefined();
  });

  it('read property names as names: properties called $ref, enum or pattern are not keywords', () => {
    const named = { type: 'object', properties: { $ref: { type: 'string' }, enum: { type: 'integer' }, pattern: { type: 'object' } }, required: ['$ref'] };
    expect(refusal(schema(named))).toBeUndefined();
    expect(refusal(schema({ enum: [{ $ref: '#' }], default: { $ref: 42 } }))).toBeUndefined();
  });

  it('follow references into what is not a subschema, and refuse the cycles found there', () => {
    expectRefused(schema({ $ref: '#/default', default: { $ref: '#' } }), /\$ref cycle/);
    expect(refusal(schema({ properties: { a: { $ref: '#/examples/0' } }, examples: [{ type: 'string' }] }))).toBeUndefined();
  });

  it('refuse references that do not resolve, and references outside the schema', () => {
    expectRefused(schema({ $ref: '#/$defs/nope' }), /does not resolve/);
    expectRefused(schema({ $ref: 'http://example.com/schema.json' }), /only references inside the schema/);
    expectRefused(schema({ properties: { a: { $ref: 7 } } }), /must be a string/);
  });

  it('refuse enums and patterns over their limits', () => {
    expectRefused(schema({ enum: Array.from({ length: L.maxEnumValues + 1 }, (_, i) => i) }), String(L.maxEnumValues), /enum/);
    expectRefused(schema({ type: 'string', pattern: 'a'.repeat(L.maxPatternChars + 1) }), String(L.maxPatternChars), /pattern/);
    expectRefused(schema({ type: 'string', pattern: '('.repeat(40) + 'a' + ')'.repeat(40) }), /groups more than 32 deep/);
    expectRefused(schema({ type: 'object', patternProperties: { '(a{1,1000}){1,1000}': {} } }), /multiply/);
  });

  it('refuse regexes nested or repeated past the limits, and let ordinary ones pass', () => {
    const regex = (pattern: string): GrammarSpec => ({ type: 'regex', pattern, param: 'sampling_params.regex' });
    expectRefused(regex('('.repeat(200) + 'a' + ')'.repeat(200)), String(L.maxGroupDepth));
    expectRefused(regex('a{1,100000}'), String(L.maxRepeat));
    expectRefused(regex('((a|b){1,300}){1,300}'), String(L.maxNestedRepeat));
    expectRefused(regex('x'.repeat(L.maxChars + 1)), String(L.maxChars));
    for (const ok of ['[a-z]+', '\\d{3}-\\d{4}', '(yes|no), [0-9]{2}', '[(]{5}', '\\({40}', '(a{1,100}){1,100}', '[^)]*\\)']) {
      expect(refusal(regex(ok)), ok).toBeUndefined();
    }
  });

  it('refuse EBNF nested or repeated past the limits, reading literals, classes and comments as such', () => {
    const ebnf = (grammar: string): GrammarSpec => ({ type: 'ebnf', grammar, param: 'sampling_params.ebnf' });
    expectRefused(ebnf('root ::= ' + '('.repeat(300) + '"a"' + ')'.repeat(300)), String(L.maxGroupDepth));
    expectRefused(ebnf('root ::= ("a"{1,1000}){1,1000}'), String(L.maxNestedRepeat));
    expect(refusal(ebnf('root ::= "(((((((((((((((((((((((((((((((((((((" [(]* # ((((((((((((((((((((((((((((((((((((\n'))).toBeUndefined();
    expect(refusal(ebnf('root ::= "a" root | "b"'))).toBeUndefined();
  });

  it('check every schema of a structural tag (tool calls)', () => {
    const tag = (json_schema: unknown): GrammarSpec => ({
      type: 'structural_tag',
      tag: JSON.stringify({ type: 'structural_tag', format: { type: 'triggered_tags', triggers: ['<tool_call>'], tags: [{ type: 'tag', begin: '<tool_call>', content: { type: 'json_schema', json_schema }, end: '</tool_call>' }] } }),
      param: 'tools',
    });
    expectRefused(tag({ $ref: '#' }), /\$ref cycle/);
    expect(refusal(tag({ type: 'object', properties: { city: { type: 'string' } } }))).toBeUndefined();
  });

  it('never throw anything but invalid_value, whatever the schema, regex or grammar', () => {
    const text = fc.oneof(fc.string({ maxLength: 60 }), fc.stringMatching(/^[()[\]{}|*+?\\a-c0-9,"#:= -]{0,60}$/));
    const spec: fc.Arbitrary<GrammarSpec> = fc.oneof(
      fc.jsonValue({ maxDepth: 6 }).map((v) => schema(v)),
      fc.string({ maxLength: 80 }).map((s) => schema(s)),
      fc.letrec<{ node: unknown }>((tie) => ({
        node: fc.oneof(
          { depthSize: 'small', withCrossShrink: true },
          fc.record({ type: fc.constantFrom('object', 'string', 'array') }),
          fc.record({ $ref: fc.constantFrom('#', '#/properties/a', '#/$defs/x', '#/allOf/0', 'x', '#/items') }),
          fc.record({ properties: fc.record({ a: tie('node') }) }),
          fc.record({ allOf: fc.array(tie('node'), { maxLength: 2 }) }),
          fc.record({ items: tie('node') }),
          fc.record({ $defs: fc.record({ x: tie('node') }), $ref: fc.constant('#/$defs/x') }),
        ),
      })).node.map((v) => schema(v)),
      text.map((pattern): GrammarSpec => ({ type: 'regex', pattern, param: 'regex' })),
      text.map((grammar): GrammarSpec => ({ type: 'ebnf', grammar, param: 'ebnf' })),
    );
    fc.assert(
      fc.property(spec, (s) => {
        const e = refusal(s);
        if (e) expect([e.code, e.param]).toEqual(['invalid_value', s.param]);
      }),
      { numRuns: 2_000, seed: 26 },
    );
  });
});
