import { z } from 'zod';
import { CatalogError, catalogProblems } from './catalog-errors.js';
import type { CatalogEntry } from './protocol.js';

/** One catalog entry, as catalog files (the package's and the data dir's) hold it. */
export const catalogEntrySchema = z.object({
  id: z.string().regex(/^svc\/[A-Za-z0-9._-]+$/, 'ids look like svc/<name>'),
  task: z.enum(['chat', 'completion', 'embedding']),
  class: z.string(),
  context_length: z.number().int().positive(),
  source: z.string().min(1),
  // Devices not named use fp32.
  dtype: z.partialRecord(z.enum(['cpu', 'cuda', 'webgpu', 'wasm']), z.string()).optional(),
  price: z.object({ input_per_1m: z.number().min(0), output_per_1m: z.number().min(0) }),
  owned_by: z.string().optional(),
});

const catalogSchema = z.object({ models: z.array(catalogEntrySchema) });

/** Local folders are written as paths ("./fixtures/x", "/opt/m"); anything else is a hub repo id. */
export function isHubId(source: string): boolean {
  return !/^[./]/.test(source);
}

/**
 * Parses a catalog file. Local sources are resolved against the catalog's folder
 * (`resolve` joins paths in a way that suits the runtime: node:path or URLs).
 * Throws a CatalogError naming the entry and field at fault (the caller names the file).
 */
export function parseCatalog(text: string, resolve: (source: string) => string): CatalogEntry[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new CatalogError(`not valid JSON: ${(err as Error).message}`);
  }
  const result = catalogSchema.safeParse(data);
  if (!result.success) throw new CatalogError(catalogProblems(result.error, data));
  const parsed = result.data;
  return parsed.models.map((m) => ({
    ...m,
    dtype: m.dtype as CatalogEntry['dtype'],
    source: isHubId(m.source) ? m.source : resolve(m.source),
  }));
}
