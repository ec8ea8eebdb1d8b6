// A throwaway redis-server for tests: started on a free port with nothing persisted
// (--save '' --appendonly no), stopped after. Suites that need it skip, saying why,
// only when the redis-server binary is missing (CI installs Debian's).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

export interface TestRedis {
  url: string;
  port: number;
  proc: ChildProcess;
  stop(): Promise<void>;
}

const CANDIDATES = [process.env.REDIS_SERVER, '/usr/bin/redis-server', '/usr/local/bin/redis-server', '/usr/sbin/redis-server'];

/** The redis-server binary, or null when there is none (on PATH or in the usual places). */
export function redisServerBinary(): string | null {
  for (const c of CANDIDATES) if (c && fs.existsSync(c)) return c;
  const r = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const found = r.stdout?.trim();
  return r.status === 0 && found ? found : null;
}

export const REDIS_MISSING =
  'redis-server is not installed (apt-get install redis-server, or set REDIS_SERVER): skipping the redis store tests';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(500, () => done(false));
    sock.on('error', () => done(false));
    sock.on('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n')) done(got.startsWith('+PONG'));
    });
  });
}

export interface RedisOptions {
  /** Listen here (a restart on the same address); default a free port. */
  port?: number;
  /** Keep data in this folder with an fsynced append-only file, so a stopped server
   * comes back with it; default nothing persisted, in a folder removed on stop. */
  persistDir?: string;
}

/** Starts redis-server on a free port and waits until it answers PING. */
export async function startRedis(opts: RedisOptions = {}): Promise<TestRedis> {
  const bin = redisServerBinary();
  if (!bin) throw new Error(REDIS_MISSING);
  let lastErr = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = opts.port ?? (await freePort());
    const dir = opts.persistDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-redis-'));
    const persist = opts.persistDir ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
    const proc = spawn(
      bin,
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persist, '--dir', dir, '--protected-mode', 'yes', '--loglevel', 'warning'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    proc.stdout!.on('data', (d) => (out += d));
    proc.stderr!.on('data', (d) => (out += d));
    const end = Date.now() + 10_000;
    while (Date.now() < end && proc.exitCode === null) {
      if (await answersPing(port)) {
        return {
          url: `redis://127.0.0.1:${port}`,
          port,
          proc,
          stop: () =>
            new Promise<void>((resolve) => {
              const finish = () => {
                if (!opts.persistDir) fs.rmSync(dir, { recursive: true, force: true });
                resolve();
              };
              if (proc.exitCode !== null || proc.signalCode !== null) return finish();
              proc.once('exit', finish);
              proc.kill('SIGTERM');
              setTimeout(() => proc.kill('SIGKILL'), 3000).unref();
            }),
        };
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    lastErr = out;
    proc.kill('SIGKILL');
    if (!opts.persistDir) fs.rmSync(dir, { recursive: true, force: true });
  }
  throw new Error(`redis-server did not start:\n${lastErr}`);
}
