// Pieces the upstream tests share: a catalog file of upstream entries, a port
// nothing listens on, and a tiny HTTP server that misbehaves on purpose (answers
// 500, or drops the connection before a byte of reply) while passing its probes.
import { createServer, type Server } from 'node:http';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export const PRICE = { input_per_1m: 0.1, output_per_1m: 0.4 };

export function catalogUpstream(id: string, task: string, urls: string[], model: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    task,
    class: 'tiny',
    context_length: 2048,
    upstream: { urls, model, api_key_env: 'UPSTREAM_KEY', probe_interval_ms: 200, timeout_ms: 10_000, ...extra },
    price: PRICE,
  };
}

export async function writeCatalog(dir: string, models: unknown[]): Promise<string> {
  const file = join(dir, 'upstream-catalog.json');
  await writeFile(file, JSON.stringify({ models }, null, 2));
  return file;
}

/** A loopback port with nothing listening on it. */
export async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

/** GET …/models answers 200; POST under /bad answers 500, under /reset drops the socket. */
export async function faultyServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [] }));
    } else if (req.url?.startsWith('/reset/')) {
      req.socket.destroy();
    } else {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'boom', type: 'server_error', param: null, code: null } }));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/**
 * A stand-in for an OpenAI-speaking server without the Responses API (as llama.cpp's server
 * and Ollama's /v1 were): POST …/responses answers 404 the way a web framework does for an
 * unknown route; everything else is passed to `target` (a real Hearth), streams included.
 * `paths` lists the POSTs it was sent.
 */
export async function chatOnlyUpstream(target: string): Promise<{ url: string; paths: string[]; close(): Promise<void> }> {
  const paths: string[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.method === 'POST') paths.push(req.url ?? '');
    if (req.url?.endsWith('/responses')) {
      req.resume();
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Not Found' }));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const h of ['authorization', 'content-type', 'accept']) if (req.headers[h]) headers.set(h, String(req.headers[h]));
    const up = await fetch(`${target}${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined });
    res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
    const reader = up.body?.getReader();
    for (let r = await reader?.read(); r && !r.done; r = await reader!.read()) res.write(r.value);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    paths,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
