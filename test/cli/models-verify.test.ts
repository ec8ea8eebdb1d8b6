// `hearth models verify` as a real subprocess on the export fixtures: the table of what
// it found, and parity with transformers.js decided by running both.
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportFixtures } from '../helpers/exports.js';
import { startMirror, type Mirror } from '../hub/mirror.js';
import { CLI } from '../helpers/cli.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
let dir: string;

function hearth(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...CLI, ...args], { cwd: ROOT, timeout: 120_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

let mirror: Mirror;

beforeAll(async () => {
  dir = await exportFixtures();
  mirror = await startMirror(dir);
}, 120_000);
afterAll(() => mirror?.close());

describe('hearth models verify', () => {
  it('prints the interface, dtype, tokens/s and a passing parity for a q4f16 export without position_ids', async () => {
    const r = await hearth(['models', 'verify', path.join(dir, 'qwen3-export'), '--dtype', 'q4f16']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/interface\s+2 layers, KV float16 \[1 heads × 8\], logits float16; position_ids absent; num_logits_to_keep fed/);
    expect(r.stdout).toMatch(/dtype\s+q4f16 \(onnx\/model_q4f16\.onnx\)/);
    expect(r.stdout).toMatch(/tokens\/s\s+\d+(\.\d)?/);
    expect(r.stdout.match(/parity "[^"]*"\s+equal/g)).toHaveLength(3);
    expect(r.stdout).toMatch(/parity\s+PASS/);
  }, 120_000);

  it("verifies a vision-language model on two pictures and a text-only chat against transformers.js's processor and Vision2Seq model", async () => {
    const r = await hearth(['models', 'verify', path.join(dir, 'smolvlm-export')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/dtype\s+fp32 \(onnx\/decoder_model_merged\.onnx\)/);
    // The weights are all three graphs' (decoder, embed_tokens, vision encoder).
    expect(r.stdout).toMatch(/size\s+2\.5 MiB of weights/);
    expect(r.stdout.match(/parity "\[picture\] [^"]*"\s+equal \(16 tokens, \d{3} prompt tokens\)/g)).toHaveLength(2);
    expect(r.stdout).toMatch(/parity "What is the capital of F"\s+equal/);
    expect(r.stdout).toMatch(/parity\s+PASS/);
  }, 120_000);

  it('verifies a Qwen2-VL model: multimodal positions, and parity on its pictures and a text-only chat', async () => {
    const r = await hearth(['models', 'verify', path.join(dir, 'qwen2vl-export')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/position_ids multimodal \[3, batch, seq\] from 0/);
    expect(r.stdout.match(/parity "[^"]*"\s+equal/g)).toHaveLength(3);
    expect(r.stdout).toMatch(/parity\s+PASS/);
  }, 120_000);

  it('verifies a Qwen2.5-VL model (its text model in text_config, image_grid_thw) against Qwen2_5_VLForConditionalGeneration', async () => {
    const r = await hearth(['models', 'verify', path.join(dir, 'qwen25vl-export')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/interface\s+2 layers, KV float32 \[1 heads × 16\], logits float32; position_ids multimodal \[3, batch, seq\] from 0/);
    // The KV for a context of text_config's max_position_embeddings (128,000), capped at 4,096 tokens.
    expect(r.stdout).toMatch(/KV 1\.0 MiB for 4096 tokens/);
    expect(r.stdout.match(/parity "\[picture\] [^"]*"\s+equal/g)).toHaveLength(2);
    expect(r.stdout.match(/parity "[^"]*"\s+equal/g)).toHaveLength(3);
    expect(r.stdout).toMatch(/parity\s+PASS/);
  }, 120_000);

  it('fails with the dtypes the folder has when asked for one it lacks', async () => {
    const r = await hearth(['models', 'verify', path.join(dir, 'gemma3-export'), '--dtype', 'q4']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('dtype "q4" (onnx/model_q4.onnx) is not in');
    expect(r.stderr).toContain('it has: fp32, fp16');
  }, 120_000);

  it('downloads a hub repo id (from HF_ENDPOINT) into the data dir first, then verifies it', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'hearth-verify-'));
    const r = await hearth(['models', 'verify', 'test-org/llama3-export', '--dtype', 'q4', '--data-dir', dataDir], { HF_ENDPOINT: mirror.url });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/dtype\s+q4 \(onnx\/model_q4\.onnx\)/);
    expect(r.stdout).toMatch(/parity\s+PASS/);
    expect(mirror.log.some((l) => l.path === '/test-org/llama3-export/resolve/main/onnx/model_q4.onnx')).toBe(true);
  }, 120_000);
});
