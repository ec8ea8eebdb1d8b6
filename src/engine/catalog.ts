import { z } from 'zod';
import { CatalogError, catalogProblems } from './catalog-errors.js';
import type { CatalogEntry } from './protocol.js';
import { SPECULATIVE_MODES } from './spec/draft-policy.js';

export const upstreamSchema = z.object({
  urls: z.array(z.url({ protocol: /^https?$/ })).min(1),
  model: z.string().min(1),
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name').optional(),
  timeout_ms: z.number().int().positive().optional(),
  probe_interval_ms: z.number().int().positive().optional(),
});

/** One catalog entry, as catalog files (the package's and the data dir's) hold it. */
export const catalogEntrySchema = z.object({
  id: z.string().regex(/^svc\/[A-Za-z0-9._-]+$/, 'ids look like svc/<name>'),
  task: z.enum(['chat', 'completion', 'embedding', 'rerank', 'transcription']),
  class: z.string(),
  context_length: z.number().int().positive(),
  source: z.string().min(1).optional(),
  upstream: upstreamSchema.optional(),
  // Devices not named use fp32.
  dtype: z.partialRecord(z.enum(['cpu', 'cuda', 'webgpu', 'wasm']), z.string()).optional(),
  price: z.object({ input_per_1m: z.number().min(0), output_per_1m: z.number().min(0), per_audio_second: z.number().min(0).optional() }),
  owned_by: z.string().optional(),
  /** Overrides what the model's files say about thinking in `<think>` blocks. */
  reasoning: z.enum(['think', 'none']).optional(),
  /** Overrides the server's `--speculative` for this model. */
  speculative: z.enum(SPECULATIVE_MODES).optional(),
  /** Another entry's id: a small model of the same tokenizer that drafts for this one. */
  draft: z.string().regex(/^svc\/[A-Za-z0-9._-]+$/, 'ids look like svc/<name>').optional(),
});

/** What `source` says of an upstream entry (it has no files). */
export const upstreamSource = (u: { model: string }) => `upstream:${u.model}`;

const catalogSchema = z.object({
  models: z.array(
    catalogEntrySchema.refine((e) => e.source !== undefined || e.upstream !== undefined, {
      message: 'an entry needs a source (or an upstream)',
      path: ['source'],
    }),
  ),
});

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
    source: m.upstream ? upstreamSource(m.upstream) : isHubId(m.source!) ? m.source! : resolve(m.source!),
  }));
}
