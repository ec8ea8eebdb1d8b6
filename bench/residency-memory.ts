// What a model's load and unload do to a server's resident memory (issue 47): RSS before the
// load, once it is loaded, and after its unload, over several cycles through the admin routes.
// Shared by the memory test (fixture model, in npm test) and bench/model-residency.ts (the
// bench model). Linux only: it reads VmRSS from /proc.
import { readFileSync } from 'node:fs';

const MiB = 2 ** 20;

/** VmRSS of one process (worker threads included: they share it), in bytes. */
export function rssBytes(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

export interface Cycle {
  cycle: number;
  before_mib: number;
  loaded_mib: number;
  /** RSS once it was back within `backWithinMib` of `before` (or at the end of the wait). */
  unloaded_mib: number;
  /** How long after the unload answered RSS came back (the wait's length where it did not). */
  back_after_ms: number;
  load_ms: number;
}

export interface CycleOptions {
  url: string;
  adminKey: string;
  model: string;
  pid: number;
  cycles?: number;
  /** After an unload, wait up to this long for RSS to come back (default 10 s, the contract's). */
  waitMs?: number;
  backWithinMib?: number;
  /** Runs once the model is loaded, before its RSS is read (a request, to fill its caches). */
  use?: () => Promise<void>;
}

const round = (b: number) => Math.round((b / MiB) * 10) / 10;

async function admin(o: CycleOptions, action: 'load' | 'unload'): Promise<void> {
  const res = await fetch(`${o.url}/admin/models/${encodeURIComponent(o.model)}/${action}`, { method: 'POST', headers: { authorization: `Bearer ${o.adminKey}` } });
  if (!res.ok) throw new Error(`${action} ${o.model}: ${res.status} ${await res.text()}`);
}

/** Samples RSS for `ms` and returns the lowest value (a level, not a moment's spike). */
export async function settledRss(pid: number, ms = 1000): Promise<number> {
  let low = Infinity;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    low = Math.min(low, rssBytes(pid));
    await new Promise((r) => setTimeout(r, 50));
  }
  return low;
}

export async function loadUnloadCycles(o: CycleOptions): Promise<Cycle[]> {
  const rows: Cycle[] = [];
  const within = (o.backWithinMib ?? 64) * MiB;
  for (let cycle = 1; cycle <= (o.cycles ?? 3); cycle++) {
    const before = await settledRss(o.pid);
    const t0 = Date.now();
    await admin(o, 'load');
    const loadMs = Date.now() - t0;
    await o.use?.();
    const loaded = await settledRss(o.pid, 500);
    await admin(o, 'unload');
    const t1 = Date.now();
    let now = rssBytes(o.pid);
    while (now > before + within && Date.now() - t1 < (o.waitMs ?? 10_000)) {
      await new Promise((r) => setTimeout(r, 100));
      now = rssBytes(o.pid);
    }
    rows.push({ cycle, before_mib: round(before), loaded_mib: round(loaded), unloaded_mib: round(now), back_after_ms: Date.now() - t1, load_ms: loadMs });
  }
  return rows;
}
