// The bench's count of V8's GC pauses (bench/gc-pauses.ts): what it gives a row's host time apart.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { countGcPauses, gcPerRow } from '../../bench/gc-pauses.js';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

describe('counting GC pauses', () => {
  it('counts the mark-compacts that run while it counts, with their time', async () => {
    const pauses = countGcPauses();
    collect();
    collect();
    const counted = await pauses.stop();
    expect(counted.major).toBeGreaterThanOrEqual(2);
    expect(counted.count).toBeGreaterThanOrEqual(counted.major);
    expect(counted.ms).toBeGreaterThan(0);
  });
});

describe('GC pauses a row', () => {
  it('divides the pauses by the rows sampled, and counts mark-compacts a hundred rows', () => {
    expect(gcPerRow({ ms: 30, count: 12, major: 3 }, 200)).toEqual({ ms_per_row: 0.15, major_per_100_rows: 1.5 });
  });
});
