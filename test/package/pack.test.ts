// `npm pack` on a clean checkout (no dist/): prepack builds, and the tarball holds what an
// installed Hearth runs (the built JavaScript and types of every export, the bin, the fixture
// builder, the catalog, README and licence) and nothing of the repository's own tests,
// benchmarks or demo.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO, run } from './apps.js';

interface Packed {
  filename: string;
  size: number;
  entryCount: number;
  files: { path: string }[];
}

describe('npm pack of a clean checkout', () => {
  let checkout: string;
  let packed: Packed;
  let files: Set<string>;

  beforeAll(async () => {
    checkout = mkdtempSync(join(tmpdir(), 'hearth-checkout-'));
    // What a fresh clone has: the tracked files (and new ones not yet committed), no dist/.
    const list = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: REPO, encoding: 'utf8' }).split('\0').filter(Boolean);
    for (const file of list) {
      if (!existsSync(join(REPO, file))) continue; // deleted, not yet committed
      mkdirSync(dirname(join(checkout, file)), { recursive: true });
      cpSync(join(REPO, file), join(checkout, file));
    }
    symlinkSync(join(REPO, 'node_modules'), join(checkout, 'node_modules'));
    const out = mkdtempSync(join(tmpdir(), 'hearth-pack-'));
    const r = await run('npm', ['pack', '--json', '--pack-destination', out], { cwd: checkout });
    if (r.code !== 0) throw new Error(`npm pack failed:\n${r.stdout}\n${r.stderr}`);
    packed = (JSON.parse(r.stdout) as Packed[])[0]!;
    files = new Set(packed.files.map((f) => f.path));
    console.log(`[package] ${packed.filename}: ${packed.size} bytes, ${packed.entryCount} files`);
  }, 300_000);

  afterAll(() => rmSync(checkout, { recursive: true, force: true }));

  it('builds before packing, since the checkout had no dist/', () => {
    expect(existsSync(join(checkout, 'dist/src/index.js'))).toBe(true);
  });

  it('holds the JavaScript and the types of every export the package.json names', () => {
    const pkg = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { exports: Record<string, string | { types: string; default: string }> };
    const subpaths = Object.keys(pkg.exports).filter((k) => k !== './package.json');
    expect(subpaths.sort()).toEqual(['.', './browser', './msw', './node', './vite']);
    for (const key of subpaths) {
      const target = pkg.exports[key] as { types: string; default: string };
      expect(files, key).toContain(target.default.replace(/^\.\//, ''));
      expect(files, key).toContain(target.types.replace(/^\.\//, ''));
    }
  });

  it('holds the bin, both engine workers, the fixture builder, the catalog, README and licence', () => {
    for (const f of ['bin/hearth.js', 'dist/src/cli/main.js', 'dist/worker/node.js', 'dist/worker/browser.js', 'dist/models/index.js', 'models/catalog.json', 'README.md', 'LICENSE', 'package.json']) {
      expect(files, f).toContain(f);
    }
  });

  it('leaves out tests, benchmarks, the demo, TypeScript sources and source maps', () => {
    const stray = [...files].filter((f) => /^(test|bench|demo|src|worker|\.ci)\//.test(f) || /\.ts$/.test(f.replace(/\.d\.ts$/, '')) || f.endsWith('.map'));
    expect(stray).toEqual([]);
  });
});
