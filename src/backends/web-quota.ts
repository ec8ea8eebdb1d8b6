// Room in the origin's storage for model files. Browsers give an origin a quota
// (navigator.storage.estimate()); a model that cannot fit is refused before its bytes
// are fetched, with the bytes needed and available in the message, rather than
// overflowing the Cache API half-way through.

export class StorageFullError extends Error {
  /** `refused`: the browser refused the write (QuotaExceededError) though its estimate said there was room. */
  constructor(
    readonly url: string,
    readonly needed: number,
    readonly available: number,
    refused = false,
  ) {
    super(
      `Not enough storage for ${url}: it needs ${needed} bytes and ${available} bytes are available` +
        (refused ? ' by navigator.storage.estimate(), but the browser refused the write (QuotaExceededError)' : ''),
    );
    this.name = 'StorageFullError';
  }
}

/** Throws StorageFullError when `bytes` more would not fit the origin's quota. Silent where there is no estimate. */
export async function ensureRoom(url: string, bytes: number): Promise<void> {
  const estimate = await globalThis.navigator?.storage?.estimate?.().catch(() => undefined);
  if (!estimate?.quota || bytes <= 0) return;
  const available = Math.max(0, estimate.quota - (estimate.usage ?? 0));
  if (bytes > available) throw new StorageFullError(url, bytes, available);
}

export function isQuotaExceeded(e: unknown): boolean {
  return (e as { name?: unknown } | null)?.name === 'QuotaExceededError';
}
