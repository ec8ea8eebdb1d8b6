// Memory comes back: on a real server, RSS after a model's unload is within 64 MiB of RSS
// before its load (within 10 s), over three load/unload cycles each cycle ends within 32 MiB of
// the first, and an on-demand server at rest holds less than an eager one of the same catalog.
// The same cycles on the bench model: bench/model-residency.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUnloadCycles, settledRss } from '../../bench/residency-memory.js';
import { chatBody, startOnDemand, type OnDemandServer } from '../helpers/on-demand-server.js';
import { waitReady } from '../helpers/server.js';

let onDemand: OnDemandServer;
let eager: OnDemandServer;
beforeAll(async () => {
  [onDemand, eager] = await Promise.all([startOnDemand(['--load', 'on-demand']), startOnDemand([])]);
  await waitReady(eager.server.url);
});
afterAll(() => Promise.all([onDemand?.stop(), eager?.stop()]));

describe.skipIf(process.platform !== 'linux')('memory of loads and unloads', () => {
  it('holds less at rest on demand than an eager server of the same models', async () => {
    const [lazy, full] = await Promise.all([settledRss(onDemand.server.proc.pid!, 1500), settledRss(eager.server.proc.pid!, 1500)]);
    console.log(`RSS at rest: on-demand ${(lazy / 2 ** 20).toFixed(1)} MiB, eager ${(full / 2 ** 20).toFixed(1)} MiB`);
    expect(lazy).toBeLessThan(full);
  });

  it('gives the memory of a model back when it unloads, cycle after cycle', async () => {
    const rows = await loadUnloadCycles({
      url: onDemand.server.url,
      adminKey: onDemand.admin,
      model: 'svc/tiny-chat',
      pid: onDemand.server.proc.pid!,
      use: async () => void (await (await onDemand.post('/v1/chat/completions', chatBody({ max_tokens: 64 }))).json()),
    });
    console.table(rows);
    for (const r of rows) expect(r.unloaded_mib).toBeLessThanOrEqual(r.before_mib + 64);
    for (const r of rows) expect(Math.abs(r.unloaded_mib - rows[0]!.unloaded_mib)).toBeLessThanOrEqual(32);
  });
});
