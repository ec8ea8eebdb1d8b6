// The demo's model picker: the catalog's hub models small enough for a tab, with their
// download size asked of the hub (a HEAD of the weights file). Offline, or where the
// hub does not answer, none are offered and the fixtures serve as before. The choice is
// remembered in localStorage and loaded at the next start.
import { isHubId } from '../src/engine/catalog.js';
import { onnxFileFor } from '../src/engine/models/files.js';
import type { CatalogEntry } from '../src/engine/protocol.js';

const REMEMBERED = 'hearth.hubModel';
/** Parameters a tab can hold: up to about 2B (weights of a few hundred MB to about 1 GB quantized). */
const MAX_PARAMS = 2e9;

export function rememberedModel(): string | null {
  return localStorage.getItem(REMEMBERED);
}

export function rememberModel(id: string | null): void {
  if (id) localStorage.setItem(REMEMBERED, id);
  else localStorage.removeItem(REMEMBERED);
}

/** "0.5B" → 5e8, "22M" → 2.2e7; unknown classes count as too big. */
function parameters(cls: string): number {
  const m = /^([\d.]+)\s*([MB])$/i.exec(cls.trim());
  return m ? Number(m[1]) * (m[2]!.toUpperCase() === 'B' ? 1e9 : 1e6) : Infinity;
}

export function browserSized(entries: CatalogEntry[]): CatalogEntry[] {
  return entries.filter((e) => isHubId(e.source) && e.task !== 'completion' && parameters(e.class) <= MAX_PARAMS);
}

export interface Offer {
  entry: CatalogEntry;
  /** Bytes of the weights file, or undefined when the hub did not answer. */
  bytes?: number;
}

/** Asks the hub for each entry's weights size; rejects nothing (an unreachable hub gives no sizes). */
export async function offers(entries: CatalogEntry[], hubURL: string, device: 'webgpu' | 'wasm'): Promise<Offer[]> {
  return Promise.all(
    entries.map(async (entry) => {
      const url = `${hubURL.replace(/\/+$/, '')}/${entry.source}/resolve/main/${onnxFileFor(entry, device)}`;
      try {
        const res = await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(5000) });
        const size = Number(res.headers.get('x-linked-size') ?? res.headers.get('content-length'));
        return { entry, bytes: res.ok && size > 0 ? size : undefined };
      } catch {
        return { entry };
      }
    }),
  );
}

export function megabytes(bytes: number): string {
  return bytes >= 1e9 ? `${(bytes / 1e9).toFixed(2)} GB` : `${(bytes / 1e6).toFixed(bytes < 1e7 ? 1 : 0)} MB`;
}
