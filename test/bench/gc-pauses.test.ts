// The bench's count of V8's GC pauses (bench/gc-pauses.ts): what it gives a row's host time apart.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { countGcPauses } from '../../bench/gc-pauses.js';

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
