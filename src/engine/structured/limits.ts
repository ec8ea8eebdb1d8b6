// Limits a schema or grammar is held to before any of it reaches XGrammar. Its WASM build
// recurses on nesting with a small stack and no overflow check: a schema nested a few
// hundred levels deep, a regex with 200 nested groups or a `$ref` that refers to itself
// overflows it, and after that the module's memory is corrupt for every later request.
// Counts that multiply (a{1,1000} inside (…){1,1000}) make grammars that take seconds to
// compile. Each limit below is far above what a real schema or grammar needs, and far
// below where XGrammar 0.1.27 fails (props nested 64 deep, arrays 80 deep, 200 groups).
import { EngineError } from '../errors.js';
import type { GrammarSpec } from '../protocol.js';

export const GRAMMAR_LIMITS = {
  /** Characters of one JSON schema (as JSON text), regex or EBNF grammar. */
  maxChars: 65_536,
  /** Nesting of objects and arrays in a schema document (an object property nested in
   * another takes two: `{"properties":{"a":{…}}}`). */
  maxSchemaDepth: 32,
  /** Values of one `enum`. */
  maxEnumValues: 1_000,
  /** Characters of one `pattern` (or `patternProperties` key) in a schema. */
  maxPatternChars: 1_000,
  /** Nesting of groups in a regex, or of parentheses in an EBNF grammar. */
  maxGroupDepth: 32,
  /** The largest count of one repetition (`{n}`, `{m,n}`, `{m,}`). */
  maxRepeat: 10_000,
  /** The largest product of the counts of repetitions nested in each other. */
  maxNestedRepeat: 10_000,
  /** Milliseconds that compiling one grammar may take (where it runs in a worker that can be ended). */
  compileMs: 5_000,
} as const;

const L = GRAMMAR_LIMITS;

function refuse(param: string, message: string): never {
  throw new EngineError('invalid_value', message, param);
}

/** Throws invalid_value naming `spec.param` and the limit when the spec is over one. */
export function checkGrammarSpec(spec: GrammarSpec): void {
  switch (spec.type) {
    case 'json_object':
      return;
    case 'json_schema':
      return checkSchemaText(spec.schema, spec.param);
    case 'regex':
      checkChars(spec.pattern, spec.param, 'regex');
      return checkRegex(spec.pattern, spec.param);
    case 'ebnf':
      checkChars(spec.grammar, spec.param, 'grammar');
      return checkEbnf(spec.grammar, spec.param);
    case 'structural_tag':
      return checkStructuralTag(spec.tag, spec.param);
  }
}

function checkChars(text: string, param: string, what: string): void {
  if (text.length > L.maxChars) refuse(param, `The ${what} in '${param}' has ${text.length} characters; the limit is ${L.maxChars}.`);
}

/** A JSON schema given as JSON text (/generate's json_schema, a response_format's schema). */
export function checkSchemaText(text: string, param: string): void {
  checkChars(text, param, 'schema');
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    refuse(param, `The schema in '${param}' is not valid JSON.`);
  }
  checkSchema(schema, param);
}

/** A JSON schema as a value (a tool's parameters, a structural tag's contents). */
export function checkSchema(schema: unknown, param: string): void {
  if (typeof schema === 'boolean') return;
  if (!isObject(schema)) refuse(param, `The schema in '${param}' must be a JSON object.`);
  // Depth first: JSON.stringify recurses, and throws on a value nested deep enough.
  const nodes = new Map<string, Record<string, unknown>>();
  walk(schema, '#', 1, param, nodes);
  const chars = JSON.stringify(schema).length;
  if (chars > L.maxChars) refuse(param, `The schema in '${param}' has ${chars} characters as JSON; the limit is ${L.maxChars}.`);
  checkRefs(schema, nodes, param);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
/** Keywords whose value is a subschema, or (allOf, prefixItems, …) an array of them. */
const SCHEMA_VALUES = new Set([
  'items', 'additionalItems', 'prefixItems', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedItems',
  'unevaluatedProperties', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'contentSchema',
]);

type Nodes = Map<string, Record<string, unknown>>;

function tooDeep(param: string, pointer: string): never {
  const at = pointer.length > 60 ? `${pointer.slice(0, 60)}…` : pointer;
  refuse(param, `The schema in '${param}' is nested more than ${L.maxSchemaDepth} levels deep (at ${at}); the limit is ${L.maxSchemaDepth} levels of objects and arrays.`);
}

/** A subschema: checks depth, enum and patterns, records it by its JSON pointer, and goes on into its parts. */
function walk(node: unknown, pointer: string, depth: number, param: string, nodes: Nodes): void {
  if (typeof node !== 'object' || node === null) return;
  if (depth > L.maxSchemaDepth) tooDeep(param, pointer);
  if (Array.isArray(node)) return walkData(node, pointer, depth, param);
  const obj = node as Record<string, unknown>;
  nodes.set(pointer, obj);
  if (Array.isArray(obj.enum) && obj.enum.length > L.maxEnumValues) {
    refuse(param, `The enum at ${pointer}/enum in '${param}' has ${obj.enum.length} values; the limit is ${L.maxEnumValues}.`);
  }
  if (typeof obj.pattern === 'string') checkPattern(obj.pattern, `${pointer}/pattern`, param);
  if (isObject(obj.patternProperties)) {
    for (const key of Object.keys(obj.patternProperties)) checkPattern(key, `${pointer}/patternProperties`, param);
  }
  for (const [key, value] of Object.entries(obj)) {
    const at = `${pointer}/${escapePointer(key)}`;
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      if (depth + 1 > L.maxSchemaDepth) tooDeep(param, at);
      for (const [name, sub] of Object.entries(value)) walk(sub, `${at}/${escapePointer(name)}`, depth + 2, param, nodes);
    } else if (SCHEMA_VALUES.has(key) && Array.isArray(value)) {
      if (depth + 1 > L.maxSchemaDepth) tooDeep(param, at);
      value.forEach((sub, i) => walk(sub, `${at}/${i}`, depth + 2, param, nodes));
    } else if (SCHEMA_VALUES.has(key)) walk(value, at, depth + 1, param, nodes);
    else walkData(value, at, depth + 1, param);
  }
}

/** A value that is not a schema (an enum, a default, a const): only its depth counts. */
function walkData(node: unknown, pointer: string, depth: number, param: string): void {
  if (typeof node !== 'object' || node === null) return;
  if (depth > L.maxSchemaDepth) tooDeep(param, pointer);
  const entries: [string, unknown][] = Array.isArray(node) ? node.map((v, i) => [String(i), v]) : Object.entries(node);
  for (const [k, v] of entries) walkData(v, `${pointer}/${escapePointer(k)}`, depth + 1, param);
}

function checkPattern(pattern: string, at: string, param: string): void {
  if (pattern.length > L.maxPatternChars) {
    refuse(param, `The pattern at ${at} in '${param}' has ${pattern.length} characters; the limit is ${L.maxPatternChars}.`);
  }
  checkRegex(pattern, param, ` (the pattern at ${at})`);
}

const escapePointer = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * Keywords whose subschemas describe the same JSON value as their parent: recursion through
 * them alone never ends (`{"$ref":"#"}`, two `$defs` naming each other). Recursion through any
 * other keyword (properties, items, …) goes one value deeper each time, as a tree does.
 */
const SAME_VALUE = ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas'];

/** Every `$ref` is local and resolves, and no chain of them comes back to where it started without going a value deeper. */
function checkRefs(root: Record<string, unknown>, nodes: Map<string, Record<string, unknown>>, param: string): void {
  const target = (pointer: string, ref: unknown): string => {
    if (typeof ref !== 'string') refuse(param, `The $ref at ${pointer} in '${param}' must be a string.`);
    if (ref !== '#' && !ref.startsWith('#/')) {
      refuse(param, `The $ref '${ref}' at ${pointer} in '${param}' cannot be resolved: only references inside the schema ('#' or '#/…') are supported.`);
    }
    const resolved = resolvePointer(root, ref);
    if (!isObject(resolved) && typeof resolved !== 'boolean') {
      refuse(param, `The $ref '${ref}' at ${pointer} in '${param}' does not resolve to a schema inside it.`);
    }
    const at = canonicalPointer(ref);
    // A reference into what is not a subschema (a default, an example) makes it one.
    if (isObject(resolved) && !nodes.has(at)) walk(resolved, at, 1, param, nodes);
    return at;
  };
  // Edges to the schemas that describe the same value; a cycle among them is refused.
  const edges = (pointer: string): string[] => {
    const node = nodes.get(pointer);
    if (!node) return [];
    const out: string[] = [];
    if ('$ref' in node) out.push(target(pointer, node.$ref));
    for (const key of SAME_VALUE) {
      const v = node[key];
      if (Array.isArray(v)) v.forEach((_, i) => out.push(`${pointer}/${key}/${i}`));
      else if (isObject(v) && key === 'dependentSchemas') for (const k of Object.keys(v)) out.push(`${pointer}/${key}/${escapePointer(k)}`);
      else if (isObject(v)) out.push(`${pointer}/${key}`);
    }
    return out;
  };
  const state = new Map<string, 'open' | 'done'>();
  for (const start of nodes.keys()) {
    if (state.has(start)) continue;
    // Iterative depth-first search: the chain of references can be as long as the schema is big.
    const stack: { pointer: string; next: string[] }[] = [{ pointer: start, next: edges(start) }];
    state.set(start, 'open');
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const next = top.next.pop();
      if (next === undefined) {
        state.set(top.pointer, 'done');
        stack.pop();
        continue;
      }
      const s = state.get(next);
      if (s === 'open') {
        refuse(param, `The schema in '${param}' refers back to ${next} through $ref without going into a property or item: a $ref cycle, which matches no finite value.`);
      }
      if (s === undefined) {
        state.set(next, 'open');
        stack.push({ pointer: next, next: edges(next) });
      }
    }
  }
}

function decodeSegment(s: string): string {
  let d = s;
  try {
    d = decodeURIComponent(s);
  } catch {
    // not percent-encoded
  }
  return d.replaceAll('~1', '/').replaceAll('~0', '~');
}

function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  let node: unknown = root;
  for (const seg of ref.slice(2).split('/').map(decodeSegment)) {
    if (Array.isArray(node) && /^\d+$/.test(seg)) node = node[Number(seg)];
    else if (isObject(node) && Object.hasOwn(node, seg)) node = node[seg];
    else return undefined;
  }
  return node;
}

/** A reference written as the pointer `walk` records (decoded, then escaped the one way). */
function canonicalPointer(ref: string): string {
  if (ref === '#') return '#';
  return '#/' + ref.slice(2).split('/').map(decodeSegment).map(escapePointer).join('/');
}

/**
 * Group nesting and repetition counts of a regex (XGrammar's syntax: ECMAScript's).
 * `where` says which part of a schema it came from.
 */
export function checkRegex(pattern: string, param: string, where = ''): void {
  scanGroups(pattern, param, where, 'regex', (p, i) => {
    const c = p[i]!;
    if (c === '\\') return i + 2;
    if (c === '[') return skipClass(p, i);
    return undefined;
  });
}

/** Group nesting and repetition counts of an EBNF grammar (XGrammar's: string literals, classes, `#` comments). */
export function checkEbnf(grammar: string, param: string): void {
  scanGroups(grammar, param, '', 'grammar', (p, i) => {
    const c = p[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < p.length && p[j] !== '"') j += p[j] === '\\' ? 2 : 1;
      return j + 1;
    }
    if (c === '[') return skipClass(p, i);
    if (c === '#') {
      const nl = p.indexOf('\n', i);
      return nl < 0 ? p.length : nl;
    }
    return undefined;
  });
}

/** The index after a character class that starts at `i` (a `]` first in it is literal). */
function skipClass(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === '^') j++;
  if (p[j] === ']') j++;
  while (j < p.length && p[j] !== ']') j += p[j] === '\\' ? 2 : 1;
  return j + 1;
}

const QUANTIFIER = /^\{\s*(\d+)\s*(?:(,)\s*(\d*)\s*)?\}/;

/**
 * Walks a pattern's groups. `skip` steps over what cannot hold a group (escapes, classes,
 * literals) and returns the next index, or undefined for an ordinary character. Each group's
 * largest product of nested counts is carried out to its parent, times its own count.
 */
function scanGroups(p: string, param: string, where: string, what: string, skip: (p: string, i: number) => number | undefined): void {
  const products: number[] = [1]; // per open group: the largest product of counts inside it so far
  let i = 0;
  /** The count of a repetition at `at` (1 for none, ?, * and +), checked against the limits. */
  const countAt = (at: number): { count: number; end: number } => {
    const m = QUANTIFIER.exec(p.slice(at, at + 40));
    if (!m) return { count: 1, end: at };
    const count = Math.max(Number(m[1]), m[3] ? Number(m[3]) : 0);
    if (count > L.maxRepeat) {
      refuse(param, `The ${what} in '${param}'${where} repeats ${m[0]} times; the limit is ${L.maxRepeat} for one repetition.`);
    }
    return { count, end: at + m[0].length };
  };
  const note = (product: number) => {
    if (product > L.maxNestedRepeat) {
      refuse(param, `The ${what} in '${param}'${where} nests repetitions whose counts multiply to ${product}; the limit is ${L.maxNestedRepeat}.`);
    }
    products[products.length - 1] = Math.max(products[products.length - 1]!, product);
  };
  while (i < p.length) {
    const c = p[i]!;
    const after = skip(p, i);
    if (after !== undefined) {
      const { count, end } = countAt(after);
      if (count > 1) note(count);
      i = end;
      continue;
    }
    if (c === '(') {
      products.push(1);
      if (products.length - 1 > L.maxGroupDepth) {
        refuse(param, `The ${what} in '${param}'${where} nests groups more than ${L.maxGroupDepth} deep; the limit is ${L.maxGroupDepth}.`);
      }
      i++;
      continue;
    }
    if (c === ')' && products.length > 1) {
      const inner = products.pop()!;
      const { count, end } = countAt(i + 1);
      note(inner * count);
      i = end;
      continue;
    }
    const { count, end } = countAt(i + 1);
    if (count > 1) note(count);
    i = end > i + 1 ? end : i + 1;
  }
}

/** A structural tag (tool calls) as the API builds it: its schemas, regexes and grammars are each checked. */
function checkStructuralTag(tag: string, param: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(tag);
  } catch {
    refuse(param, `The structural tag in '${param}' is not valid JSON.`);
  }
  const visit = (node: unknown, depth: number): void => {
    if (depth > L.maxSchemaDepth) refuse(param, `The structural tag in '${param}' is nested more than ${L.maxSchemaDepth} levels deep.`);
    if (Array.isArray(node)) return node.forEach((x) => visit(x, depth + 1));
    if (!isObject(node)) return;
    if (node.type === 'json_schema' || node.type === 'qwen_xml_parameter') return checkSchema(node.json_schema, param);
    if (node.type === 'regex' && typeof node.pattern === 'string') {
      checkChars(node.pattern, param, 'regex');
      return checkRegex(node.pattern, param);
    }
    if (node.type === 'grammar' && typeof node.grammar === 'string') {
      checkChars(node.grammar, param, 'grammar');
      return checkEbnf(node.grammar, param);
    }
    for (const v of Object.values(node)) visit(v, depth + 1);
  };
  visit(parsed, 1);
}
