// Seeds and replays for the fuzz suites: every run has a seed, printed at the start (fast-check
// prints its own counterexample path on failure), and a failing request is printed as a curl
// command line, its body saved to a file when it is long.
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type fc from 'fast-check';

const SCALE = Number(process.env.FUZZ_SCALE ?? 1);

/**
 * The run's seed, printed so that any run can be replayed. `npm test` runs a fixed seed per suite
 * (a red CI is then a regression, not a new find by chance); `npm run fuzz` (FUZZ_SEED=random)
 * draws fresh ones to look for new cases; FUZZ_SEED=<n> replays one.
 */
export function fuzzSeed(suite: string): number {
  const given = process.env.FUZZ_SEED;
  const seed = given === 'random' ? Math.floor(Math.random() * 2 ** 31) : given !== undefined ? Number(given) : FIXED_SEEDS[suite] ?? 1;
  console.log(`fuzz ${suite}: seed ${seed} (replay: FUZZ_SEED=${seed} npx vitest run test/fuzz/${suite}.test.ts)`);
  return seed;
}

/** The seeds `npm test` runs: the structured suite's is the one that found regex `."` dying on a lead byte. */
const FIXED_SEEDS: Record<string, number> = { http: 20261125, structured: 579307185 };

/** fast-check parameters: the run's seed, FUZZ_SCALE times `numRuns` cases. */
export function fuzzParams(seed: number, numRuns: number): fc.Parameters<unknown> {
  return { numRuns: Math.max(1, Math.round(numRuns * SCALE)), seed };
}

let saved = 0;

/** A curl command that sends the same request (the key left as $HEARTH_KEY). */
export function replayable(url: string, method: string, headers: Record<string, string>, body?: string): string {
  const h = Object.entries(headers)
    .map(([k, v]) => (k.toLowerCase() === 'authorization' ? `-H 'authorization: Bearer $HEARTH_KEY'` : `-H ${quote(`${k}: ${v}`)}`))
    .join(' ');
  if (body === undefined) return `curl -sS -i -X ${method} ${h} ${quote(url)}`;
  if (body.length <= 2_000) return `curl -sS -i -X ${method} ${h} --data-binary ${quote(body)} ${quote(url)}`;
  const file = join(tmpdir(), `hearth-fuzz-${process.pid}-${saved++}.body`);
  writeFileSync(file, body);
  return `curl -sS -i -X ${method} ${h} --data-binary @${file} ${quote(url)}`;
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
