// writeFixtures writes deterministic fixture folders, atomically, and skips existing ones on request.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR, writeFixtures } from '../../models/index.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'hearth-fixtures-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const hash = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

describe('writeFixtures', () => {
  it('resolves FIXTURES_DIR to the repository models/fixtures folder', () => {
    expect(FIXTURES_DIR.replace(/\\/g, '/')).toMatch(/\/models\/fixtures$/);
    expect(existsSync(join(FIXTURES_DIR, '..', '..', 'package.json'))).toBe(true);
  });

  it('writes the same bytes on every run', async () => {
    const [a, b] = [tmp(), tmp()];
    expect(await writeFixtures({ outDir: a })).toEqual(['tiny-chat', 'tiny-embed', 'tiny-rerank', 'tiny-whisper']);
    await writeFixtures({ outDir: b });
    for (const name of ['tiny-chat', 'tiny-embed', 'tiny-rerank']) {
      for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx']) {
        expect(hash(join(a, name, f)), `${name}/${f}`).toBe(hash(join(b, name, f)));
      }
    }
    for (const f of ['config.json', 'generation_config.json', 'tokenizer.json', 'onnx/encoder_model.onnx', 'onnx/decoder_model_merged.onnx']) {
      expect(hash(join(a, 'tiny-whisper', f)), `tiny-whisper/${f}`).toBe(hash(join(b, 'tiny-whisper', f)));
    }
    expect(readdirSync(a).sort()).toEqual(['tiny-chat', 'tiny-embed', 'tiny-rerank', 'tiny-whisper']); // no temp folders left
  });

  it('skips existing fixtures with ifMissing', async () => {
    const d = tmp();
    await writeFixtures({ outDir: d });
    expect(await writeFixtures({ outDir: d, ifMissing: true })).toEqual([]);
    rmSync(join(d, 'tiny-embed'), { recursive: true });
    expect(await writeFixtures({ outDir: d, ifMissing: true })).toEqual(['tiny-embed']);
  });

  it('writes config and generation config with the ids the engine needs', async () => {
    const d = tmp();
    await writeFixtures({ outDir: d });
    const config = JSON.parse(readFileSync(join(d, 'tiny-chat', 'config.json'), 'utf8'));
    expect(config).toMatchObject({ model_type: 'llama', num_hidden_layers: 2, num_key_value_heads: 2, head_dim: 64, max_position_embeddings: 2048, eos_token_id: 511 });
    const gen = JSON.parse(readFileSync(join(d, 'tiny-chat', 'generation_config.json'), 'utf8'));
    expect(gen.eos_token_id).toEqual([511, 509]);
  });
});
