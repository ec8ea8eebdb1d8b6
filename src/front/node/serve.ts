import type { Server as HttpServer } from 'node:http';
import { writeFixtures } from '../../../models/index.js';
import { createAccess } from '../../access/access.js';
import { openStore } from '../../access/open-store.js';
import { createRouter } from '../../api/router.js';
import { nodeAudioDecoder } from './audio-decoder.js';
import { CUDA_INSTALL_HINT, cudaProviderInstalled } from '../../backends/node.js';
import { startNodeEngine } from '../../engine/client/node.js';
import { createRuntime } from '../../runtime.js';
import type { Runtime } from '../../types.js';
import { readIncidents } from '../../ops/incidents.js';
import { createLogger, observers, requestLogger } from '../../ops/logger.js';
import { createMetrics } from '../../ops/metrics.js';
import { logModelStates, ModelOps } from '../../ops/model-ops.js';
import { entryFromSource, sourceId, splitModels } from '../../ops/model-source.js';
import { recordAdd, updateOverlay } from '../../ops/served-catalog.js';
import type { Source } from '../../ops/checkpoints.js';
import type { DownloadProgress } from '../../engine/protocol.js';
import { catalogIds, loadCatalog } from './catalog.js';
import { DEFAULT_DATA_DIR, type ServeOptions } from './options.js';
import { defaultCatalogFile, hubCacheDir } from '../../paths.js';
import { createHttpServer } from './http-server.js';
import { prepareDataDir } from './data-dir.js';
import { checkListen, listenError } from './listen.js';
import { undiciTransport } from '../../upstream/node.js';
import { Upstreams, withUpstreams } from '../../upstream/registry.js';

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** How long close() takes at most: in-flight requests finish or are cut, then the engine's worker ends. */
export const DRAIN_MS = 10_000;
/** The part of DRAIN_MS kept for the engine to dispose of its models (at most a quarter of it). */
const ENGINE_SHARE_MS = 2_000;

/** The local Node server: the router behind a real HTTP listener, the engine in a worker thread. */
export async function serve(opts: ServeOptions = {}): Promise<RunningServer> {
  const log = opts.log ?? (() => undefined);
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? 8080;
  // Mistakes are found here, before anything is created or printed, each with an Error
  // naming the option and the fix, rather than later as a stack trace, an unhandled
  // 'error' event or a failed model in a worker.
  if (opts.device === 'cuda' && !cudaProviderInstalled()) {
    throw new Error(`--device cuda: onnxruntime-node's CUDA provider is not installed. ${CUDA_INSTALL_HINT}`);
  }
  await checkListen(host, port);
  const dataDir = prepareDataDir(opts.dataDir ?? DEFAULT_DATA_DIR);
  if (!opts.catalog) {
    const written = await writeFixtures({ ifMissing: true });
    if (written.length) log(`Wrote fixture models: ${written.join(', ')}`);
  }
  // --models takes catalog ids and, as `vllm serve org/name` does, folders and hub repo ids.
  const { ids, sources } = splitModels(opts.models);
  const catalogFile = opts.catalog ?? defaultCatalogFile();
  const catalogLabel = opts.catalog ? `--catalog ${opts.catalog}` : undefined;
  const catalog = ids && !ids.length ? [] : await loadCatalog(catalogFile, ids, catalogLabel);

  await addSources(sources, { dataDir, catalogFile, catalogLabel, onDownload: opts.onDownload });

  const access = createAccess({
    store: await openStore(opts.store, dataDir),
    rateLimit: opts.rateLimit,
    sandboxCapUsd: opts.sandboxCapUsd,
    responseRetention: opts.responseRetention,
  });
  const firstKey = await access.ensureFirstKey();
  if (firstKey) log(`Created an admin API key (shown once; keep it):\n${firstKey}`);

  // Operations: JSON logs, metrics, the served catalog in the data dir (models added,
  // removed or redeployed while running), announced incidents for /status.
  const logger = createLogger({ level: opts.logLevel });
  const metrics = createMetrics({ key: opts.metricsKey });
  // Upstream models live beside the local engine; their requests go out over undici's keep-alive pools.
  const upstreamHttp = undiciTransport();
  const upstreams = new Upstreams({ transport: upstreamHttp.transport, observer: metrics.upstream });
  const local = startNodeEngine({
    device: opts.device,
    kvCacheMb: opts.kvCacheMb,
    maxImagePixels: opts.maxImagePixels,
    speculative: opts.speculative,
    threads: opts.threads,
    hubCacheDir: hubCacheDir(),
    load: opts.load,
    keepAliveMs: opts.keepAliveMs,
    maxLoadedModels: opts.maxLoadedModels,
    memoryBudgetMb: opts.memoryBudgetMb,
    loadTimeoutMs: opts.loadTimeoutMs,
    // The engine restarts by itself; why it stopped goes in the log.
    onCrash: (cause, code) => logger.error({ exit_code: code, cause: cause?.stack ?? cause?.message ?? 'none reported' }, 'engine worker stopped; restarting it and loading its models again'),
  });
  const engine = withUpstreams(local, upstreams);
  metrics.setEngine(engine);
  metrics.setUpstreams(upstreams);
  // Nothing may outlive a failed start: the worker thread (and the upstream probes)
  // would keep the process alive.
  const abandon = async (err: unknown): Promise<never> => {
    upstreams.close();
    await upstreamHttp.close().catch(() => undefined);
    await local.terminate().catch(() => undefined);
    await access.close().catch(() => undefined);
    throw err;
  };
  const ops = await ModelOps.open({
    engine,
    base: catalog,
    dataDir,
    device: opts.device,
    log: (msg, fields) => logger.info(fields ?? {}, msg),
  }).catch(abandon);
  const served = ops.entries();
  const runtime: Runtime = {
    ...createRuntime({ engine: metrics.wrap(engine), access, catalog: served }),
    catalog: () => ops.entries(),
    admin: ops,
    observer: observers(metrics.observer, requestLogger(logger)),
    metrics: metrics.source,
    incidents: () => readIncidents(dataDir),
    upstreams,
  };
  const stopWatching = ops.watch();
  const stopStateLog = logModelStates(engine, (level, msg, fields) => logger[level](fields, msg));
  const { maxBodyBytes, maxEmbeddingInputs, maxEmbeddingTokens, maxGenerations, maxImages, maxImageBytes, imageUrlHosts, maxAudioBytes, maxAudioSeconds } = opts;
  const imageUrls = imageUrlHosts?.length ? { hosts: imageUrlHosts } : undefined;
  // Uploads decode in a worker of their own: minutes of audio never stall the HTTP loop or the engine's steps.
  const audio = nodeAudioDecoder();
  const app = createRouter(runtime, { maxBodyBytes, maxEmbeddingInputs, maxEmbeddingTokens, maxGenerations, maxImages, maxImageBytes, imageUrls, maxAudioBytes, maxAudioSeconds, decodeAudio: audio.decode });

  // Every answer, even to a request the router never sees, is an envelope with an x-request-id.
  const server = await new Promise<HttpServer>((resolve, reject) => {
    const s = createHttpServer(app.fetch, host);
    // Taken since checkListen: said in the same words.
    const failed = (err: Error) => {
      stopWatching();
      stopStateLog();
      abandon(listenError(err, host, port)).catch(reject);
    };
    s.once('error', failed);
    s.listen({ host, port }, () => {
      s.off('error', failed);
      resolve(s);
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  log(`Hearth listening on ${url} (models: ${served.map((e) => e.id).join(', ') || 'none'})`);
  logger.info({ url, models: served.map((e) => e.id), device: opts.device ?? 'cpu', data_dir: dataDir }, 'serving');

  let closed: Promise<void> | undefined;
  return {
    url,
    close: () =>
      (closed ??= (async () => {
        // Stop accepting, give in-flight requests until the deadline less the engine's share,
        // then cut what is left. The engine gets the rest of the deadline to dispose of its
        // models (a graph run in flight finishes first: onnxruntime aborts the process if its
        // thread is ended mid-run); then its worker is ended whatever it is doing.
        const http = server;
        const drainMs = opts.drainMs ?? DRAIN_MS;
        const engineShare = Math.min(ENGINE_SHARE_MS, drainMs / 4);
        logger.info({ deadline_ms: drainMs }, 'shutting down: draining in-flight requests');
        const started = Date.now();
        let finished = false;
        const drained = new Promise<void>((r) => server.close(() => ((finished = true), r())));
        // A keep-alive socket goes idle when its request ends; close each as it does.
        http.closeIdleConnections();
        const sweep = setInterval(() => http.closeIdleConnections(), 50);
        const deadline = new Promise<void>((r) => setTimeout(r, drainMs - engineShare).unref());
        await Promise.race([drained, deadline]);
        clearInterval(sweep);
        stopWatching();
        stopStateLog();
        if (!finished) logger.warn({ after_ms: Date.now() - started }, 'drain deadline reached: cutting the remaining connections');
        else logger.info({ after_ms: Date.now() - started }, 'drained');
        http.closeAllConnections();
        await local.terminate(Math.max(0, drainMs - (Date.now() - started)));
        await runtime.close();
        await upstreamHttp.close();
        await audio.close();
      })()),
  };
}

/** Folders and hub repos named by --models join the served catalog in the data dir (a hub repo
 * downloaded first), so that they are served now and on the next start. */
async function addSources(
  sources: { item: string; src: Source }[],
  opts: { dataDir: string; catalogFile: string; catalogLabel?: string; onDownload?: (p: DownloadProgress) => void },
): Promise<void> {
  const taken = sources.length ? await catalogIds(opts.catalogFile, opts.catalogLabel) : [];
  for (const { item, src } of sources) {
    const id = sourceId(src);
    if (taken.includes(id)) {
      throw new Error(`--models ${item}: ${id} is already a model of ${opts.catalogLabel ?? 'the catalog'}; add it under another id with \`hearth models add --id svc/NAME --from ${item}\``);
    }
    const entry = await entryFromSource({ id, from: item }, src, opts.onDownload).catch((err: Error) => {
      throw new Error(`--models ${item}: ${err.message}`);
    });
    await updateOverlay(opts.dataDir, (o) => recordAdd(o, entry));
  }
}

