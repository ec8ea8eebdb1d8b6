// `hearth serve`'s flags for models on demand: when models load, how long idle ones stay, and
// how many (or how much) may be loaded at once. Parsed here, beside serve.ts's other flags.
import { parseKeepAlive } from '../engine/keep-alive.js';
import type { ServeOptions } from '../front/node/options.js';
import { intFlag, numberFlag, type FlagValues } from './args.js';
import { UsageError } from './errors.js';

export const RESIDENCY_OPTIONS = {
  load: { type: 'string' },
  'keep-alive': { type: 'string' },
  'max-loaded-models': { type: 'string' },
  'memory-budget-mb': { type: 'string' },
  'load-timeout-s': { type: 'string' },
} as const;

export const RESIDENCY_HELP = `  --load M               eager (default: every listed model loads at start) or
                         on-demand (each is unloaded until its first request)
  --keep-alive D         how long an idle model stays loaded after its last request:
                         30s, 5m, 1h, a number of seconds, or -1 = forever
                         (default -1 with eager, 5m with on-demand)
  --max-loaded-models N  models loaded at once; a load past it first unloads the
                         least recently used idle model (default: no limit)
  --memory-budget-mb M   MiB the loaded models' estimates (weights + one context of
                         KV) may add up to, evicting as above (default: no limit)
  --load-timeout-s S     how long a request waits for its model to load, a slot
                         to free included, before a 503 (default 120)
`;

/** `--keep-alive -1` as `--keep-alive=-1`: parseArgs takes a value that starts with "-" for a flag of its own. */
export function joinNegativeKeepAlive(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--keep-alive' && /^-\d/.test(args[i + 1] ?? '')) out.push(`--keep-alive=${args[++i]}`);
    else out.push(args[i]!);
  }
  return out;
}

/** The residency flags as ServeOptions. */
export function residencyOptions(values: FlagValues<typeof RESIDENCY_OPTIONS>): Partial<ServeOptions> {
  const o: Partial<ServeOptions> = {};
  if (values.load !== undefined) {
    if (values.load !== 'eager' && values.load !== 'on-demand') throw new UsageError(`serve: --load must be eager or on-demand (got "${values.load}")`);
    o.load = values.load;
  }
  if (values['keep-alive'] !== undefined) {
    const ms = parseKeepAlive(values['keep-alive']);
    if (ms === null) throw new UsageError(`serve: --keep-alive takes a duration (30s, 5m, 1h), a number of seconds, or -1 for forever (got "${values['keep-alive']}")`);
    o.keepAliveMs = ms;
  }
  const max = intFlag('serve', 'max-loaded-models', values['max-loaded-models'], 1);
  if (max !== undefined) o.maxLoadedModels = max;
  const budget = numberFlag('serve', 'memory-budget-mb', values['memory-budget-mb'], 1);
  if (budget !== undefined) o.memoryBudgetMb = budget;
  const timeout = numberFlag('serve', 'load-timeout-s', values['load-timeout-s'], 0);
  if (timeout !== undefined) o.loadTimeoutMs = Math.round(timeout * 1000);
  return o;
}
