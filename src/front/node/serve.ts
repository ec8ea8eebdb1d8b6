import { serve as listen, type ServerType } from '@hono/node-server';
import type { Server as HttpServer } from 'node:http';
import { writeFixtures } from '../../../models/index.js';
import { createAccess } from '../../access/access.js';
import { openStore } from '../../access/open-store.js';
import { createRouter } from '../../api/router.js';
import { CUDA_INSTALL_HINT, cudaProviderInstalled } from '../../backends/node.js';
import { startNodeEngine } from '../../engine/client/node.js';
import { createRuntime } from '../../runtime.js';
import { loadCatalog } from './catalog.js';
import { DEFAULT_DATA_DIR, type ServeOptions } from './options.js';
import { defaultCatalogFile } from './paths.js';
import { answerClientErrors } from './client-errors.js';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** How long close() lets in-flight requests finish before cutting them. */
const DRAIN_MS = 10_000;

/** The local Node server: the router behind a real HTTP listener, the engine in a worker thread. */
export async function serve(opts: ServeOptions = {}): Promise<RunningServer> {
  const log = opts.log ?? (() => undefined);
  const host = opts.host ?? '127.0.0.1';
  // Fail here, with the fix, rather than later as a failed model in a worker.
  if (opts.device === 'cuda' && !cudaProviderInstalled()) {
    throw new Error(`--device cuda: onnxruntime-node's CUDA provider is not installed. ${CUDA_INSTALL_HINT}`);
  }
  if (!opts.catalog) {
    const written = await writeFixtures({ ifMissing: true });
    if (written.length) log(`Wrote fixture models: ${written.join(', ')}`);
  }
  const catalog = await loadCatalog(opts.catalog ?? defaultCatalogFile(), opts.models);

  const access = createAccess({
    store: await openStore(opts.store, opts.dataDir ?? DEFAULT_DATA_DIR),
    rateLimit: opts.rateLimit,
    sandboxCapUsd: opts.sandboxCapUsd,
  });
  const firstKey = await access.ensureFirstKey();
  if (firstKey) log(`Created an admin API key (shown once; keep it):\n${firstKey}`);

  const runtime = createRuntime({ engine: startNodeEngine({ device: opts.device, kvCacheMb: opts.kvCacheMb }), access, catalog });
  const app = createRouter(runtime, { maxBodyBytes: opts.maxBodyBytes });

  const server = await new Promise<ServerType>((resolve) => {
    const s = listen({ fetch: app.fetch, hostname: host, port: opts.port ?? 8080 }, () => resolve(s));
  });
  // Requests Node's parser refuses get the JSON error envelope too, not a bare status line.
  answerClientErrors(server as unknown as HttpServer);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log(`Hearth listening on ${url} (models: ${catalog.map((e) => e.id).join(', ') || 'none'})`);

  let closed: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closed ??= (async () => {
        // Stop accepting, give in-flight requests a moment, then cut what is left.
        const http = server as ServerType & { closeIdleConnections?: () => void; closeAllConnections?: () => void };
        const drained = new Promise<void>((r) => server.close(() => r()));
        http.closeIdleConnections?.(); // idle keep-alive sockets would hold close() open
        const deadline = new Promise<void>((r) => setTimeout(r, DRAIN_MS).unref());
        await Promise.race([drained, deadline]);
        http.closeAllConnections?.();
        await runtime.close();
      })()),
  };
}
