import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { fixtures } from './fixtures.js';
import { CLI } from './cli.js';

const run = promisify(execFile);

/** Runs the hearth command (the package's bin, on the build) and returns its stdout. */
export async function hearth(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [...CLI, ...args], { cwd: process.cwd() });
  return stdout;
}

export async function createKey(dataDir: string, extra: string[] = []): Promise<string> {
  const out = await hearth(['keys', 'create', '--data-dir', dataDir, ...extra]);
  return out.trim().split('\n').pop()!;
}

export interface TestServer {
  url: string;
  dataDir: string;
  proc: ChildProcess;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `hearth serve --port 0` as a real process and waits for its listening line. */
export async function startServer(args: string[] = [], dataDir?: string): Promise<TestServer> {
  dataDir ??= await mkdtemp(join(tmpdir(), 'hearth-test-'));
  const proc = spawn(process.execPath, [...CLI, 'serve', '--port', '0', '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 60_000);
    const check = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  return {
    url,
    dataDir,
    proc,
    output: () => out,
    stop: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve(proc.exitCode);
        proc.once('exit', (code) => resolve(code));
        proc.kill(signal);
      }),
  };
}

/** Polls /health until every model is ready. */
export async function waitReady(url: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const res = await fetch(`${url}/health`).catch(() => undefined);
    if (res?.ok) {
      const body = (await res.json()) as { models: Record<string, string> };
      const states = Object.values(body.models);
      if (states.length && states.every((s) => s === 'ready')) return;
      if (states.includes('failed')) throw new Error(`a model failed: ${JSON.stringify(body)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('models did not become ready');
}

/** A served fixture catalog with a key of its own and an openai client for it, as the SDK tests use it. */
export async function startSdkServer(prefix: string): Promise<{ server: TestServer; key: string; client: OpenAI }> {
  await fixtures();
  const dataDir = await mkdtemp(join(tmpdir(), prefix));
  const key = await createKey(dataDir);
  const server = await startServer([], dataDir);
  await waitReady(server.url);
  return { server, key, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 }) };
}
