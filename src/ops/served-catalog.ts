// The served catalog in the data dir (`<dataDir>/catalog.json`): what operators
// changed on top of the package's catalog. Models added (with their resolved
// source), ids removed, and redeploy requests (an id and when), so that the CLI
// without --url can act on a running server by editing this file, which the
// server watches. Written atomically (temporary file, then rename).
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { catalogEntrySchema } from '../engine/catalog.js';
import { catalogProblems } from '../engine/catalog-errors.js';
import type { CatalogEntry } from '../engine/protocol.js';

export const SERVED_CATALOG = 'catalog.json';

const overlaySchema = z.object({
  models: z.array(catalogEntrySchema).default([]),
  removed: z.array(z.string()).default([]),
  redeploys: z.record(z.string(), z.string()).default({}),
});

export type Overlay = z.infer<typeof overlaySchema>;

export const servedCatalogPath = (dataDir: string) => join(dataDir, SERVED_CATALOG);

export async function readOverlay(dataDir: string): Promise<Overlay> {
  const file = servedCatalogPath(dataDir);
  if (!existsSync(file)) return { models: [], removed: [], redeploys: {} };
  let data: unknown;
  try {
    data = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new Error(`the served catalog ${file} is not valid JSON: ${(e as Error).message}`);
  }
  const r = overlaySchema.safeParse(data);
  if (!r.success) throw new Error(`the served catalog ${file} is malformed: ${catalogProblems(r.error, data)}`);
  return r.data;
}

export async function writeOverlay(dataDir: string, overlay: Overlay): Promise<void> {
  await mkdir(dataDir, { recursive: true });
  const file = servedCatalogPath(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(overlay, null, 2) + '\n', { mode: 0o600 });
  await rename(tmp, file);
}

/** Reads, changes and writes the overlay (one writer at a time within this process). */
let chain: Promise<unknown> = Promise.resolve();
export function updateOverlay(dataDir: string, change: (o: Overlay) => void): Promise<Overlay> {
  const run = chain.then(async () => {
    const o = await readOverlay(dataDir);
    change(o);
    await writeOverlay(dataDir, o);
    return o;
  });
  chain = run.catch(() => undefined);
  return run;
}

/** The base catalog with the overlay applied: removed ids dropped, added entries replacing or joining. */
export function applyOverlay(base: CatalogEntry[], o: Overlay): CatalogEntry[] {
  const added = new Map(o.models.map((e) => [e.id, e as CatalogEntry]));
  const out = base.filter((e) => !o.removed.includes(e.id) && !added.has(e.id));
  return [...out, ...added.values()];
}

export function recordAdd(o: Overlay, entry: CatalogEntry): void {
  o.models = [...o.models.filter((e) => e.id !== entry.id), entry as Overlay['models'][number]];
  o.removed = o.removed.filter((id) => id !== entry.id);
}

export function recordRemove(o: Overlay, id: string): void {
  o.models = o.models.filter((e) => e.id !== id);
  if (!o.removed.includes(id)) o.removed.push(id);
  delete o.redeploys[id];
}

export function recordRedeploy(o: Overlay, id: string, at = new Date().toISOString()): void {
  o.redeploys[id] = at;
}
