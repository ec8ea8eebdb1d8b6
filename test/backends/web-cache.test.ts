// The Cache API path of model files, in Node with the browser's pieces stood in for:
// a download whose announced size exceeds what navigator.storage.estimate() leaves is
// refused before its body is read, and the files of its model already stored go too.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fetchModelFile, MODEL_CACHE, onStorageFull } from '../../src/backends/web-cache.js';

/** A Cache API bucket in memory (only what fetchModelFile uses). */
function memoryCaches() {
  const store = new Map<string, Response>();
  const cache = {
    match: async (url: string) => store.get(url)?.clone(),
    put: async (url: string, res: Response) => void store.set(url, res),
    delete: async (url: string) => store.delete(url),
  };
  return { store, caches: { open: async (name: string) => (expect(name).toBe(MODEL_CACHE), cache) } };
}

describe('fetchModelFile against the storage quota', () => {
  let store: Map<string, Response>;
  let bodyReads: number;

  beforeEach(() => {
    const m = memoryCaches();
    store = m.store;
    bodyReads = 0;
    vi.stubGlobal('caches', m.caches);
    vi.stubGlobal('navigator', { storage: { estimate: async () => ({ usage: 4_000, quota: 10_000 }) } });
    vi.stubGlobal('fetch', async (url: string) => {
      const size = url.endsWith('.onnx') ? 50_000 : 100;
      const body = new ReadableStream<Uint8Array>({
        pull(c) {
          bodyReads++;
          c.enqueue(new Uint8Array(size));
          c.close();
        },
      }, { highWaterMark: 0 }); // pulled only when read
      return new Response(body, { headers: { 'content-length': String(size) } });
    });
  });

  afterEach(() => {
    vi.unstubAllGlobals();
    onStorageFull(async () => undefined);
  });

  it('stores a file that fits', async () => {
    const bytes = await fetchModelFile('http://app.test/models/m/config.json');
    expect(bytes.byteLength).toBe(100);
    expect([...store.keys()]).toEqual(['http://app.test/models/m/config.json']);
  });

  it('refuses a file larger than the room left before reading its body, naming the bytes needed and available, and reports it', async () => {
    await fetchModelFile('http://app.test/models/m/config.json');
    const full: string[] = [];
    onStorageFull(async (href) => {
      full.push(href);
      store.clear(); // what the worker does: the model's other files go
    });
    bodyReads = 0;
    await expect(fetchModelFile('http://app.test/models/m/onnx/model.onnx')).rejects.toThrow(
      'Not enough storage for http://app.test/models/m/onnx/model.onnx: it needs 50000 bytes and 6000 bytes are available',
    );
    expect(bodyReads).toBe(0);
    expect(full).toEqual(['http://app.test/models/m/onnx/model.onnx']);
    expect(store.size).toBe(0);
  });
});
