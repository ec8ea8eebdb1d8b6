// Hub downloads through transformers.js against a local mirror (no network):
// HF_ENDPOINT's layout, files in the data dir, progress, and interrupted downloads
// that never leave a half file under a whole file's name.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { downloadModel, fileUrl, configureHub } from '../../src/engine/hub/node.js';
import { validateCheckpoint } from '../../src/engine/models/files.js';
import type { DownloadProgress } from '../../src/engine/protocol.js';
import { exportFixtures } from '../helpers/exports.js';
import { fixtures } from '../helpers/fixtures.js';
import { startMirror, type Mirror } from './mirror.js';

let dir: string;
let mirror: Mirror;
const sha = async (p: string) => createHash('sha256').update(await readFile(p)).digest('hex');

beforeAll(async () => {
  dir = await fixtures();
  mirror = await startMirror(dir);
});
afterAll(() => mirror.close());

describe('hub downloads', () => {
  it('builds URLs from the endpoint and the hub layout', async () => {
    configureHub({ cacheDir: '/tmp/x', endpoint: mirror.url });
    expect(fileUrl('org/tiny-chat', 'onnx/model.onnx')).toBe(`${mirror.url}/org/tiny-chat/resolve/main/onnx/model.onnx`);
  });

  it('downloads a model into the cache dir with progress, byte-identical, and skips it the second time', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-hub-'));
    const events: DownloadProgress[] = [];
    const folder = await downloadModel(
      { cacheDir, endpoint: mirror.url },
      { repo: 'test-org/tiny-chat', task: 'chat', onProgress: (p) => events.push(p) },
    );
    expect(folder).toBe(join(cacheDir, 'test-org', 'tiny-chat'));
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'generation_config.json', 'onnx/model.onnx']) {
      expect(await sha(join(folder, f)), f).toBe(await sha(join(dir, 'tiny-chat', f)));
    }
    expect(await validateCheckpoint(nodeBackend('cpu'), folder)).toMatchObject({ model_type: 'llama', task: 'chat' });
    const onnx = events.filter((e) => e.file === 'onnx/model.onnx');
    expect(onnx.at(-1)).toMatchObject({ done: true, loaded: 5792304 });
    expect(events.some((e) => e.file === 'tokenizer.json')).toBe(true);
    const before = mirror.log.length;
    await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/tiny-chat', task: 'chat' });
    // Only transformers.js's small metadata look-ups, no file bodies again.
    expect(mirror.log.slice(before).filter((r) => r.path.endsWith('.onnx') && !r.range)).toEqual([]);
  });

  it("fetches a decoder embedder's pooling config with its weights", async () => {
    await exportFixtures();
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-hub-'));
    const folder = await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/qwen3-embed-export', task: 'embedding' });
    expect(await sha(join(folder, '1_Pooling/config.json'))).toBe(await sha(join(dir, 'qwen3-embed-export', '1_Pooling/config.json')));
    expect(await validateCheckpoint(nodeBackend('cpu'), folder)).toMatchObject({ model_type: 'qwen3', task: 'embedding' });
  });

  it('an interrupted weight download leaves only a .partial, then resumes with a Range request', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-hub-'));
    mirror.cut.set('onnx/model.onnx', 1);
    const err = await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/tiny-chat', task: 'chat' }).catch((e) => e);
    expect(err.message).toMatch(/cut at \d+ of 5792304 bytes/);
    const onnxDir = join(cacheDir, 'test-org', 'tiny-chat', 'onnx');
    expect(await readdir(onnxDir)).toEqual(['model.onnx.partial']);
    await expect(validateCheckpoint(nodeBackend('cpu'), join(cacheDir, 'test-org', 'tiny-chat'))).rejects.toThrow(/no ONNX model/);
    const from = mirror.log.length;
    await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/tiny-chat', task: 'chat' });
    const resumed = mirror.log.slice(from).find((r) => r.path.endsWith('onnx/model.onnx') && r.range !== 'bytes=0-0');
    expect(resumed?.range).toMatch(/^bytes=[1-9]\d*-$/);
    expect(await readdir(onnxDir)).toEqual(['model.onnx']);
    expect(await sha(join(onnxDir, 'model.onnx'))).toBe(await sha(join(dir, 'tiny-chat', 'onnx', 'model.onnx')));
  });

  it('an interrupted tokenizer download (transformers.js FileCache) leaves no tokenizer.json behind', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-hub-'));
    mirror.cut.set('tokenizer.json', 1);
    await expect(downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/tiny-embed', task: 'embedding' })).rejects.toThrow();
    const folder = join(cacheDir, 'test-org', 'tiny-embed');
    expect(existsSync(join(folder, 'tokenizer.json'))).toBe(false);
    expect((await readdir(folder)).filter((f) => f.startsWith('tokenizer.json'))).toEqual([]);
    await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/tiny-embed', task: 'embedding' });
    expect(await sha(join(folder, 'tokenizer.json'))).toBe(await sha(join(dir, 'tiny-embed', 'tokenizer.json')));
  });

  it('two downloads of the same repo at once write each file once, whole; a lock left by a dead process is taken over', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-hub-'));
    const onnxDir = join(cacheDir, 'test-org', 'tiny-chat', 'onnx');
    await mkdir(onnxDir, { recursive: true });
    await writeFile(join(onnxDir, 'model.onnx.lock'), '999999999'); // no such process
    const from = mirror.log.length;
    const opts = { cacheDir, endpoint: mirror.url };
    await Promise.all([
      downloadModel(opts, { repo: 'test-org/tiny-chat', task: 'chat' }),
      downloadModel(opts, { repo: 'test-org/tiny-chat', task: 'chat' }),
    ]);
    expect(await sha(join(onnxDir, 'model.onnx'))).toBe(await sha(join(dir, 'tiny-chat', 'onnx', 'model.onnx')));
    expect(await readdir(onnxDir)).toEqual(['model.onnx']);
    expect(mirror.log.slice(from).filter((r) => r.path.endsWith('onnx/model.onnx') && !r.range)).toHaveLength(1);
  });

  it('says which repo and host when the repo does not exist', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'hearth-hub-'));
    const err = await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/nope', task: 'chat' }).catch((e) => e);
    expect(err.message).toContain('test-org/nope');
    expect(err.message).toContain(mirror.url);
  });
});
