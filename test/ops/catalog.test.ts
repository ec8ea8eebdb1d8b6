// The package catalog: real models for users with network beside the fixtures, each
// complete (hub source, dtype per device, context length, price); the default serve
// still picks only the local fixtures; no registry host is written into the code.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isHubId, parseCatalog } from '../../src/engine/catalog.js';
import { onnxFileFor } from '../../src/engine/models/files.js';
import { loadCatalog } from '../../src/front/node/catalog.js';
import { defaultCatalogFile } from '../../src/paths.js';
import { fixtures } from '../helpers/fixtures.js';

const file = defaultCatalogFile();
const all = parseCatalog(readFileSync(file, 'utf8'), (s) => join(file, '..', s));
const hub = all.filter((e) => isHubId(e.source));

describe('models/catalog.json', () => {
  it('lists the 7B chat class at 128k, 32k and 32k, and no 70B class, which one machine cannot load', () => {
    const ctx = (cls: string) => hub.filter((e) => e.task === 'chat' && e.class === cls).map((e) => e.context_length).sort((a, b) => b - a);
    expect(ctx('7B')).toEqual([131072, 32768, 32768]);
    expect(ctx('70B')).toEqual([]);
  });

  it('states the download size of every hub entry', () => {
    const raw = JSON.parse(readFileSync(file, 'utf8')) as { models: { id: string; source: string; notes?: string }[] };
    for (const e of raw.models.filter((m) => isHubId(m.source))) expect(e.notes, e.id).toMatch(/\d+(\.\d+)? [GM]B/);
  });

  it('lists embedding models and small browser models', () => {
    expect(hub.filter((e) => e.task === 'embedding').length).toBeGreaterThanOrEqual(2);
    const browser = hub.filter((e) => e.dtype?.webgpu && e.dtype?.wasm && /^(0\.\d+B|1B|\d+M)$/.test(e.class));
    expect(browser.length).toBeGreaterThanOrEqual(2);
  });

  it('gives every hub entry an org/name source, a dtype per device the engine can load, a context length and a price', () => {
    for (const e of hub) {
      expect(e.source, e.id).toMatch(/^[\w.-]+\/[\w.-]+$/);
      for (const d of ['cpu', 'cuda', 'webgpu', 'wasm'] as const) {
        expect(e.dtype?.[d], `${e.id} ${d}`).toBeDefined();
        expect(() => onnxFileFor(e, d)).not.toThrow();
      }
      expect(e.context_length).toBeGreaterThan(0);
      expect(e.price.input_per_1m).toBeGreaterThan(0);
    }
  });

  it('the default serve picks only the local fixtures; hub models only when named', async () => {
    await fixtures();
    const served = await loadCatalog(file);
    expect(served.every((e) => !isHubId(e.source))).toBe(true);
    expect(served.map((e) => e.id)).toContain('svc/tiny-chat');
    expect((await loadCatalog(file, ['svc/qwen2.5-0.5b'])).map((e) => e.source)).toEqual(['onnx-community/Qwen2.5-0.5B-Instruct']);
  });

  it('no hub host name is written into the code (HF_ENDPOINT or transformers.js decides)', () => {
    const hits: string[] = [];
    const walk = (dir: string) => {
      for (const f of readdirSync(dir)) {
        const p = join(dir, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.(ts|js)$/.test(f) && /huggingface\.co|\bhf\.co\b/.test(readFileSync(p, 'utf8'))) hits.push(p);
      }
    };
    walk('src');
    walk('worker');
    expect(hits).toEqual([]);
  });
});
