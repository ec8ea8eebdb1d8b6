// A catalog that does not parse, said in words: which entry (by its id) and which field,
// and what is wrong with it, in one line rather than a schema dump.
import type { z } from 'zod';

/** A catalog that does not parse; `problems` says why in words (`entry "svc/x": task is missing`). */
export class CatalogError extends Error {
  constructor(readonly problems: string) {
    super(`catalog: ${problems}`);
  }
}

const MAX_ENTRIES = 3;

function valueAt(data: unknown, path: readonly PropertyKey[]): unknown {
  let v = data;
  for (const k of path) v = v !== null && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined;
  return v;
}

/** Where the issue is (`entry "svc/x"`, `entry #2`, or '' for the catalog itself) and what is wrong. */
function problem(issue: z.core.$ZodIssue, data: unknown): [where: string, what: string] {
  const [top, index, ...rest] = issue.path;
  const inEntry = top === 'models' && typeof index === 'number';
  const id = inEntry ? valueAt(data, [top, index, 'id']) : undefined;
  const where = inEntry ? `entry ${typeof id === 'string' && id ? `"${id}"` : `#${index + 1}`}` : '';
  if (!issue.path.length) return [where, 'must be a JSON object {"models": [...]}'];
  const fieldPath = inEntry ? rest : issue.path;
  const field = fieldPath.length ? fieldPath.map(String).join('.') : 'it';
  if (valueAt(data, issue.path) === undefined && issue.code !== 'unrecognized_keys') return [where, `${field} is missing`];
  switch (issue.code) {
    case 'invalid_type':
      return [where, `${field} must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`];
    case 'invalid_value':
      return [where, `${field} must be one of ${issue.values.map((v) => String(v)).join(', ')}`];
    case 'too_small':
      return [where, `${field} must be ${issue.inclusive ? 'at least' : 'more than'} ${String(issue.minimum)}`];
    case 'unrecognized_keys':
      return [where, `${field} has unknown ${issue.keys.length > 1 ? 'keys' : 'key'} ${issue.keys.join(', ')}`];
    default:
      return [where, `${field}: ${issue.message}`];
  }
}

/** One line for a catalog's schema issues, grouped by entry: `entry "svc/x": task is
 * missing, dtype has unknown key tpu; entry #2: ...` (the first three entries at fault). */
export function catalogProblems(error: z.ZodError, data: unknown): string {
  const byEntry = new Map<string, Set<string>>();
  for (const issue of error.issues) {
    const [where, what] = problem(issue, data);
    byEntry.set(where, (byEntry.get(where) ?? new Set()).add(what));
  }
  const parts = [...byEntry].map(([where, whats]) => `${where ? `${where}: ` : ''}${[...whats].join(', ')}`);
  const more = parts.length - MAX_ENTRIES;
  return parts.slice(0, MAX_ENTRIES).join('; ') + (more > 0 ? `; and ${more} more ${more > 1 ? 'entries' : 'entry'}` : '');
}
