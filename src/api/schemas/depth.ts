// JSON values a request hands on as they are (a tool call's arguments, chat_template_kwargs)
// reach code that recurses on them: the chat template, and the structured clone that carries
// them to the engine's worker. Nested deep enough, that recursion overflows the stack, a 500
// for what is bad input; the request is refused first.
import { invalidRequest } from '../errors.js';

/** The deepest nesting of objects and arrays such a value may have; real ones stay far below. */
export const MAX_VALUE_DEPTH = 64;

/** Throws invalid_value naming `param` when `value` nests deeper than MAX_VALUE_DEPTH. */
export function checkDepth(value: unknown, param: string): void {
  // Iterative: the point is not to recurse on it.
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_VALUE_DEPTH) throw invalidRequest(`'${param}' is nested more than ${MAX_VALUE_DEPTH} levels deep; the limit is ${MAX_VALUE_DEPTH}.`, param);
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, depth + 1]);
  }
}
