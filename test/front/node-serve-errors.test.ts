// serve() from hearth/node, started wrongly: each mistake is a rejected promise with an
// Error naming the option and the fix (never an unhandled 'error' event or a hang), and
// nothing is left listening or running.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serve } from '../../src/front/node/serve.js';
import type { ServeOptions } from '../../src/front/node/options.js';
import { fixtures } from '../helpers/fixtures.js';
import { freePort, refused } from '../helpers/ports.js';
import { waitReady } from '../helpers/server.js';

const dirs: string[] = [];
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-serve-errors-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

const base = (): ServeOptions => ({ dataDir: tempDir(), store: 'memory', logLevel: 'silent' });
const catalogFile = (data: unknown) => {
  const f = path.join(tempDir(), 'catalog.json');
  fs.writeFileSync(f, typeof data === 'string' ? data : JSON.stringify(data));
  return f;
};
const entry = (over: Record<string, unknown> = {}) => ({
  id: 'svc/mine',
  task: 'chat',
  class: '0.3M',
  context_length: 2048,
  source: path.resolve('models/fixtures/tiny-chat'),
  price: { input_per_1m: 0.1, output_per_1m: 0.4 },
  ...over,
});

describe('serve() refuses a bad start with a clear Error', () => {
  it('a taken port: says which and how to get a free one, and creates nothing', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const { port } = blocker.address() as net.AddressInfo;
    const dataDir = path.join(tempDir(), 'never');
    try {
      await expect(serve({ ...base(), dataDir, port })).rejects.toThrow(
        `port ${port} is in use on 127.0.0.1: stop the other server, or pass --port 0 for any free port`,
      );
      expect(fs.existsSync(dataDir)).toBe(false);
    } finally {
      blocker.close();
    }
  });

  it.each<[string, () => ServeOptions, RegExp]>([
    ['a data dir that is a file', () => ({ ...base(), dataDir: catalogFile('x') }), /^--data-dir \S+catalog\.json is a file, not a folder: pass a folder/],
    ['a data dir under a file', () => ({ ...base(), dataDir: path.join(catalogFile('x'), 'sub') }), /^--data-dir \S+ cannot be created: \S+catalog\.json is a file, not a folder$/],
    ['a missing catalog', () => ({ ...base(), catalog: '/nonexistent/catalog.json' }), /^--catalog \/nonexistent\/catalog\.json cannot be read: no such file or folder \(ENOENT\)$/],
    ['a catalog that is not JSON', () => ({ ...base(), catalog: catalogFile('{"models": [') }), /^--catalog \S+: not valid JSON: /],
    ['a catalog entry missing fields', () => ({ ...base(), catalog: catalogFile({ models: [entry({ task: undefined, price: undefined })] }) }), /^--catalog \S+: entry "svc\/mine": task is missing, price is missing$/],
    ['an unknown model id', () => ({ ...base(), models: ['svc/nope'] }), /^--models: svc\/nope is not in the catalog \S+; it lists svc\/tiny-chat, /],
    ['an unresolvable host', () => ({ ...base(), host: 'no-such-host.invalid', port: 0 }), /^--host no-such-host\.invalid does not resolve to an address/],
    ['an unknown store', () => ({ ...base(), store: 'sqlite' }), /^unknown store "sqlite"/],
  ])('%s', async (_, options, message) => {
    const port = await freePort();
    await expect(serve({ port, ...options() })).rejects.toThrow(message);
    expect(await refused(port)).toBe(true);
  });

  it('a malformed served catalog in the data dir: rejects naming the entry and field, leaves nothing listening', async () => {
    const dataDir = tempDir();
    fs.writeFileSync(path.join(dataDir, 'catalog.json'), '{"models": [{"id": "svc/x"}]}');
    const port = await freePort();
    await expect(serve({ ...base(), dataDir, port })).rejects.toThrow(/^the served catalog \S+ is malformed: entry "svc\/x": task is missing, class is missing/);
    expect(await refused(port)).toBe(true);
  });
});

describe('catalog entries naming a dtype for some devices only', () => {
  it('are served, the devices not named using fp32', async () => {
    await fixtures();
    const server = await serve({ ...base(), port: 0, catalog: catalogFile({ models: [entry({ dtype: { webgpu: 'q4f16' } })] }) });
    try {
      await waitReady(server.url);
      const health = (await (await fetch(`${server.url}/health`)).json()) as { models: Record<string, string> };
      expect(health.models).toEqual({ 'svc/mine': 'ready' });
    } finally {
      await server.close();
    }
  });
});
