// A model named by where it is, a local folder or a hub repo id, as `hearth models add
// --from` and `hearth serve --models` take it (as `vllm serve org/name` does): the
// checkpoint validated into a catalog entry, a hub repo downloaded whole first, with
// progress, so that a server starts it from disk. Node only.
import { basename } from 'node:path';
import { configureHub, downloadModel } from '../engine/hub/node.js';
import { validateCheckpoint } from '../engine/models/files.js';
import type { CatalogEntry, DownloadProgress } from '../engine/protocol.js';
import { hubCacheDir } from '../paths.js';
import type { AddModelRequest } from '../types.js';
import { classifySource, entryFromFolder, entryFromHub, nodeFiles, type Source } from './checkpoints.js';

/** The id a source is served under when none is given: svc/ and the folder's or repo's name. */
export function sourceId(src: Source): string {
  const name = src.kind === 'folder' ? basename(src.folder) : src.repo.split('/')[1]!;
  return `svc/${name.replace(/[^A-Za-z0-9._-]/g, '-')}`;
}

/** Whether `--models` names a folder or a hub repo rather than a catalog id (those start with svc/). */
export function sourceOf(item: string): Source | undefined {
  if (item.startsWith('svc/')) return undefined;
  try {
    return classifySource(item);
  } catch {
    return undefined;
  }
}

const CONNECTION_ERRORS = /fetch failed \((ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT|bad port)\)/;

/**
 * `--models` (or hearth/msw's `models`) split into catalog ids and the folders and hub repos it
 * names (those `accept` takes; the rest are ids). `ids` is undefined when nothing was named:
 * the whole catalog; empty when only sources were: none of it.
 */
export function splitModels(items: string[] | undefined, accept: (src: Source) => boolean = () => true): { ids?: string[]; sources: { item: string; src: Source }[] } {
  const sources = (items ?? []).flatMap((item) => {
    const src = sourceOf(item);
    return src && accept(src) ? [{ item, src }] : [];
  });
  return { ids: items?.filter((item) => !sources.some((s) => s.item === item)), sources };
}

/** A connection that failed (rather than an HTTP answer) says the hub cannot be reached at all. */
function unreachable(err: unknown): string | undefined {
  return CONNECTION_ERRORS.exec(err instanceof Error ? err.message : String(err))?.[1];
}

/** The catalog entry for `req.from`, its files on disk; a hub repo is downloaded first. */
export async function entryFromSource(req: AddModelRequest, src: Source, onProgress?: (p: DownloadProgress) => void): Promise<CatalogEntry> {
  if (src.kind === 'folder') return entryFromFolder(req, src.folder);
  const cacheDir = hubCacheDir();
  try {
    const entry = await entryFromHub(req, src.repo, cacheDir);
    const folder = await downloadModel({ cacheDir }, { repo: src.repo, task: entry.task, dtype: entry.dtype?.cpu ?? 'fp32', onProgress });
    await validateCheckpoint(nodeFiles, folder, { entry, device: 'cpu' });
    return entry;
  } catch (err) {
    const why = unreachable(err);
    if (!why) throw err;
    configureHub({ cacheDir });
    const { env } = await import('@huggingface/transformers');
    throw new Error(`the hub at ${env.remoteHost} cannot be reached (${why}); set HF_ENDPOINT to a reachable hub or mirror, or pass a local folder`);
  }
}
