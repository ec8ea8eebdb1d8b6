// `hearth serve --device webgpu` where onnxruntime-node's WebGPU provider finds no adapter
// (VK_ICD_FILENAMES naming no file: Vulkan has no driver) says so in one `hearth:` line and
// exits 1, before it creates or prints anything, rather than serving models that all fail.
// Where there is an adapter (SwiftShader here), the same check lets it through.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE_WEBGPU_SKIP } from '../helpers/node-webgpu.js';
import { webgpuAdapterProblem } from '../../src/backends/node-webgpu-probe.js';
import { CLI } from '../helpers/cli.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'hearth-webgpu-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function serve(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = [...CLI, 'serve', '--device', 'webgpu', '--port', '0', '--store', 'memory', '--data-dir', join(dir, 'data')];
  return new Promise((done, fail) => {
    execFile(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return fail(err);
      done({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

describe('hearth serve --device webgpu', () => {
  it('with no adapter, prints one hearth: line naming WebGPU and the adapter, no stack, and exits 1', async () => {
    const r = await serve({ VK_ICD_FILENAMES: join(dir, 'no-such-icd.json') });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^hearth: --device webgpu: .*WebGPU.*adapter/);
    expect(lines[0]).toContain('--device cpu');
    expect(existsSync(join(dir, 'data'))).toBe(false);
  });

  it.skipIf(NODE_WEBGPU_SKIP)('with an adapter, passes the check', async () => {
    expect(await webgpuAdapterProblem()).toBeUndefined();
  });
});
