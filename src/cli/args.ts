// Thin helpers over node:util parseArgs: usage errors, number flags, shared options.

import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const satisfies Options;
export const STORE_OPTIONS = {
  'data-dir': { type: 'string' },
  store: { type: 'string' },
} as const satisfies Options;

/** The parsed flags of `options` (no `multiple` flags are used). */
export type FlagValues<O extends Options> = { [K in keyof O]?: O[K] extends { type: 'boolean' } ? boolean : string };

/** parseArgs with strict checking; its errors become UsageErrors naming the command. */
export function parse<O extends Options>(
  command: string,
  args: string[],
  options: O,
  allowPositionals = false,
): { values: FlagValues<O>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals, allowNegative: false });
    return { values: values as FlagValues<O>, positionals };
  } catch (err) {
    const msg = (err as Error).message.replace(/\. To specify a positional argument.*$/s, '.');
    const hint = /^Unknown option/.test(msg) ? `. Run "hearth ${command.split(' ')[0]} --help" for its options.` : '';
    throw new UsageError(`${command}: ${msg}${hint}`);
  }
}

export function intFlag(command: string, name: string, raw: string | undefined, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\s*-?\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`${command}: --${name} must be an integer ${max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`} (got "${raw}")`);
  }
  return n;
}

export function numberFlag(command: string, name: string, raw: string | undefined, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min) throw new UsageError(`${command}: --${name} must be a number ≥ ${min} (got "${raw}")`);
  return n;
}
