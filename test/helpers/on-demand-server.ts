// A real server started with on-demand flags, its admin and user keys, and the calls the
// on-demand integration tests make of it.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtures } from './fixtures.js';
import { createKey, startServer, type TestServer } from './server.js';

export interface OnDemandServer {
  server: TestServer;
  admin: string;
  user: string;
  post(path: string, body: unknown, key?: string): Promise<Response>;
  get(path: string, key?: string): Promise<Response>;
  /** /v1/models as the user sees it, by id. */
  models(): Promise<Record<string, { status: string; expires_at: number | null; size_mb?: number }>>;
  /** A sample's value from /metrics (0 when absent). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  stop(): Promise<void>;
}

export async function startOnDemand(flags: string[]): Promise<OnDemandServer> {
  await fixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-on-demand-'));
  const admin = await createKey(dataDir, ['--admin', '--name', 'ops']);
  const user = await createKey(dataDir, ['--name', 'dev', '--rate-limit', '1000']);
  const server = await startServer(flags, dataDir);
  const headers = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
  const post = (path: string, body: unknown, key = user) => fetch(`${server.url}${path}`, { method: 'POST', headers: headers(key), body: JSON.stringify(body) });
  const get = (path: string, key = user) => fetch(`${server.url}${path}`, { headers: headers(key) });
  return {
    server,
    admin,
    user,
    post,
    get,
    async models() {
      const list = (await (await get('/v1/models')).json()) as { data: { id: string; status: string; expires_at: number | null; size_mb?: number }[] };
      return Object.fromEntries(list.data.map((m) => [m.id, m]));
    },
    async metric(name, labels = {}) {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
      const line = text.split('\n').find((l) => l.startsWith(name) && (l[name.length] === ' ' || l[name.length] === '{') && want.every((w) => l.includes(w)));
      return line ? Number(line.split(' ').pop()) : 0;
    },
    stop: async () => void (await server.stop()),
  };
}

export const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0, ...extra });

/** Polls /v1/models until the model has the status. */
export async function untilStatus(s: OnDemandServer, id: string, status: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    const m = (await s.models())[id];
    if (m?.status === status) return;
    if (Date.now() > end) throw new Error(`${id} is ${m?.status}, never ${status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
