// A local hub mirror for tests: serves models/fixtures/<name>/ at
// /{org}/{name}/resolve/{revision}/{file}, as the hub lays files out, with Range
// support, and a switch that cuts a file's body halfway to test interrupted downloads.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

export interface Mirror {
  url: string;
  /** Every request: method, path and Range header. */
  log: { method: string; path: string; range?: string }[];
  /** Files (repo-relative, e.g. "onnx/model.onnx") whose next N responses are cut halfway. */
  cut: Map<string, number>;
  close(): Promise<void>;
}

export async function startMirror(fixturesDir: string): Promise<Mirror> {
  const log: Mirror['log'] = [];
  const cut = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    log.push({ method: req.method ?? 'GET', path, ...(req.headers.range ? { range: req.headers.range } : {}) });
    const m = /^\/([^/]+)\/([^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const file = m ? normalize(m[4]) : '';
    const local = m ? join(fixturesDir, m[2], file) : '';
    if (!m || file.startsWith('..') || !existsSync(local) || statSync(local).isDirectory()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    const size = statSync(local).size;
    let start = 0;
    let end = size - 1;
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
    if (range) {
      start = Number(range[1]);
      end = range[2] ? Math.min(Number(range[2]), size - 1) : size - 1;
      if (start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
    }
    const length = end - start + 1;
    const headers: Record<string, string | number> = {
      'content-length': length,
      'content-type': file.endsWith('.json') ? 'application/json' : 'application/octet-stream',
      'accept-ranges': 'bytes',
    };
    if (range) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    res.writeHead(range ? 206 : 200, headers);
    if (req.method === 'HEAD') return void res.end();
    const cuts = cut.get(file) ?? 0;
    if (cuts > 0 && length > 1) {
      // Send half of what was announced, then drop the connection.
      cut.set(file, cuts - 1);
      const half = Math.floor(length / 2);
      createReadStream(local, { start, end: start + half - 1 })
        .on('end', () => setTimeout(() => res.socket?.destroy(), 20))
        .pipe(res, { end: false });
      return;
    }
    createReadStream(local, { start, end }).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    cut,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
