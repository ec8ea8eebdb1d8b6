// The temporary apps that install packed Hearth as its users do (test/package/apps/*):
// pack, copy an app, install it from npm's cache with the app's committed lock, run
// things in it. Shared by the package tests, `npm run test:apps:lock` and the CI's
// cache warm-up.
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { killGroup, spawnGroup, stopGroup } from '../helpers/process-group.js';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const APPS = join(REPO, 'test/package/apps');
export type AppName = 'current' | 'node20';

const exec = promisify(execFile);

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, never throwing on a non-zero exit. It runs in a process group
 * of its own, killed whole on timeout, and anything it left running is killed when it ends. */
export function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((done) => {
    const child = spawnGroup(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d));
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => killGroup(child), opts.timeoutMs ?? 300_000);
    // A process it left running would hold its stdout open, and 'close' off, until the timeout.
    child.on('exit', () => killGroup(child));
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** `npm pack` of this checkout's built dist (pretest builds it) into a fresh folder; the tarball's path. */
export async function packHearth(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hearth-pack-'));
  await exec('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], { cwd: REPO });
  const file = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!file) throw new Error(`npm pack wrote no tarball into ${dir}`);
  return join(dir, file);
}

export const integrityOf = (file: string): string => `sha512-${createHash('sha512').update(readFileSync(file)).digest('base64')}`;

/** A copy of the app with the tarball as hearth.tgz and the lock's entry for it made to match. */
export function copyApp(name: AppName, tarball: string): string {
  const dir = mkdtempSync(join(tmpdir(), `hearth-app-${name}-`));
  cpSync(join(APPS, name), dir, { recursive: true });
  cpSync(tarball, join(dir, 'hearth.tgz'));
  const lockFile = join(dir, 'package-lock.json');
  if (existsSync(lockFile)) {
    const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, { integrity?: string }> };
    const entry = lock.packages['node_modules/hearth'];
    if (entry) entry.integrity = integrityOf(join(dir, 'hearth.tgz'));
    writeFileSync(lockFile, JSON.stringify(lock, null, 2));
  }
  return dir;
}

/** The environment an installed app runs in: `node` is the given binary, onnxruntime-node's CUDA download skipped. */
export function appEnv(node: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH}`, ONNXRUNTIME_NODE_INSTALL: 'skip', ...extra };
}

/**
 * `npm ci --offline` in the app: everything comes from npm's cache, which `npm ci` of this
 * repository and `node test/package/warm-cache.mjs` fill. Resolves to why it could not
 * install (undefined when it did).
 */
export async function installApp(dir: string, node: string): Promise<string | undefined> {
  const r = await run('npm', ['ci', '--offline', '--no-audit', '--no-fund'], { cwd: dir, env: appEnv(node) });
  if (r.code === 0) return undefined;
  if (/ENOTCACHED|cache mode is 'only-if-cached'/.test(r.stderr)) {
    return `npm's cache lacks packages of test/package/apps/${dir.includes('node20') ? 'node20' : 'current'}/package-lock.json: run \`node test/package/warm-cache.mjs\` (.ci/run does) with the registry reachable`;
  }
  throw new Error(`npm ci in ${dir} failed (${r.code}):\n${r.stderr.slice(-4000)}`);
}

/** A Node binary whose major version `want` accepts: `$envName` when set, else this process's
 * node, else the machine's /usr/bin/node or /usr/local/bin/node; undefined when none fits. */
export function findNode(want: (major: number) => boolean, envName: string): string | undefined {
  const given = process.env[envName];
  if (given) return existsSync(given) ? given : undefined;
  for (const bin of [process.execPath, '/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(bin)) continue;
    const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
    if (want(Number(/^v(\d+)/.exec(version)?.[1]))) return bin;
  }
  return undefined;
}

export interface AppServer {
  url: string;
  key: string;
  output: () => string;
  stop(): Promise<number | null>;
}

/** `npx hearth keys create` then `npx hearth serve --port 0` inside the app, as its user would type them. */
export async function serveFromApp(dir: string, env: NodeJS.ProcessEnv): Promise<AppServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-app-data-'));
  const keys = await run('npx', ['--no', '--', 'hearth', 'keys', 'create', '--data-dir', dataDir], { cwd: dir, env });
  if (keys.code !== 0) throw new Error(`hearth keys create failed:\n${keys.stderr}`);
  const key = keys.stdout.trim().split('\n').pop()!;
  // In a group of its own, stopped whole: npx runs the bin as its child and, sent SIGTERM, exits without it.
  const proc = spawnGroup('npx', ['--no', '--', 'hearth', 'serve', '--port', '0', '--data-dir', dataDir], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d));
  proc.stderr!.on('data', (d: Buffer) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`hearth serve did not start:\n${out}`)), 120_000);
    proc.stdout!.on('data', () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.once('exit', (code) => reject(new Error(`hearth serve exited with ${code}:\n${out}`)));
  });
  return {
    url,
    key,
    output: () => out,
    stop: () => stopGroup(proc),
  };
}

/** Every file under `dir` with its size and modification time, to tell whether anything wrote there. */
export function snapshot(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        const s = statSync(p);
        files.set(p.slice(dir.length + 1), `${s.size}:${s.mtimeMs}`);
      }
    }
  };
  walk(dir);
  return files;
}

/** The chat request every front door answers in the package tests: greedy, so every door gives the same text. */
export const GREEDY_CHAT = { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0, max_tokens: 16 };
