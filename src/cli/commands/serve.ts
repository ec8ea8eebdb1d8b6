// hearth serve

import type { Device } from '../../engine/protocol.js';
import { SPECULATIVE_MODES, type SpeculativeMode } from '../../engine/spec/draft-policy.js';
import type { ServeOptions } from '../../front/node/options.js';
import { HELP_OPTION, STORE_OPTIONS, intFlag, numberFlag, parse } from '../args.js';
import { CliError, UsageError } from '../errors.js';
import { downloadBars, type ProgressView } from '../progress.js';
import type { Io } from '../io.js';
import { RESIDENCY_HELP, RESIDENCY_OPTIONS, joinNegativeKeepAlive, residencyOptions } from '../residency-flags.js';

export const SERVE_HELP = `Usage: hearth serve [options]

Serves the catalog's models with the OpenAI-shaped API (and /generate).

  --host H               interface to listen on (default 127.0.0.1)
  --port P               port (default 8080; 0 takes a free port)
  --data-dir D           where keys, usage and the served catalog live (default ./.hearth)
  --catalog FILE         catalog JSON (default models/catalog.json of the package)
  --models id,id         serve only these: catalog ids, checkpoint folders or hub repo ids
                         (org/name, downloaded first), a folder or repo as svc/<its name>
  --device D             cpu (default), cuda or webgpu
  --rate-limit N         requests per minute per key (default 60)
  --sandbox-cap-usd N    monthly spend cap of sandbox accounts in USD (default 5)
  --max-body-bytes N     largest request body (default 1048576)
  --max-embedding-inputs N  inputs of one embeddings request (default 2048, OpenAI's)
  --max-embedding-tokens N  tokens of one embeddings request's inputs in all
                         (default 300000, OpenAI's)
  --max-generations N    generations one request may start, prompts × n (default 128)
  --max-images N         images one request may hold (default 16)
  --max-image-bytes N    largest image in bytes (default 20000000; more is a 413)
  --max-image-pixels N   largest image in pixels (default 50000000; more is a 413,
                         refused from its header before it is decoded)
  --max-audio-bytes N    largest audio file of /v1/audio/transcriptions and
                         /translations (default 26214400, OpenAI's 25 MiB; more is a 413)
  --max-audio-seconds N  longest audio one transcription may carry (default 3600; more is a 400)
  --image-url-hosts H    hosts (name or name:port, comma-separated) whose http(s)
                         image URLs may be fetched (default: none; data: URLs only)
  --kv-cache-mb N        prefix-cache memory per model in MiB (default 256; 0 = off)
${RESIDENCY_HELP}  --speculative S        ngram (default: drafts by prompt lookup while one request
                         runs), draft (a catalog entry's draft model, prompt lookup
                         where it names none) or off; an entry's "speculative" overrides it
  --threads N            CPU threads of each graph run (default: onnxruntime's, one per core)
  --metrics-key K        GET /metrics then needs "Authorization: Bearer K" (default: open)
  --log-level L          JSON logs on stdout: debug, info (default), warn, error, silent
  --store S              file (default), memory, or a redis:// URL
  --responses-per-account N  stored responses (/v1/responses) each account keeps,
                         the oldest deleted first (default 1000)
  --responses-max-age-days D  how long a stored response is kept (default 30)
  -h, --help             show this help

On a first start with no keys, a key is created and printed.
SIGINT/SIGTERM: stops accepting, finishes or cuts in-flight streams, flushes the ledger, exits 0.
`;

const DEVICES = ['cpu', 'cuda', 'webgpu'] as const;

/** Parses `hearth serve` flags into ServeOptions (exported for tests). */
export function serveOptions(args: string[], io: Io): ServeOptions | null {
  const { values } = parse('serve', joinNegativeKeepAlive(args), {
    ...HELP_OPTION,
    ...STORE_OPTIONS,
    ...RESIDENCY_OPTIONS,
    host: { type: 'string' },
    port: { type: 'string' },
    catalog: { type: 'string' },
    models: { type: 'string' },
    device: { type: 'string' },
    'rate-limit': { type: 'string' },
    'sandbox-cap-usd': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'max-images': { type: 'string' },
    'max-image-bytes': { type: 'string' },
    'image-url-hosts': { type: 'string' },
    'max-image-pixels': { type: 'string' },
    'max-audio-bytes': { type: 'string' },
    'max-audio-seconds': { type: 'string' },
    'max-embedding-inputs': { type: 'string' },
    'max-embedding-tokens': { type: 'string' },
    'max-generations': { type: 'string' },
    'kv-cache-mb': { type: 'string' },
    speculative: { type: 'string' },
    threads: { type: 'string' },
    'metrics-key': { type: 'string' },
    'log-level': { type: 'string' },
    'responses-per-account': { type: 'string' },
    'responses-max-age-days': { type: 'string' },
  });
  if (values.help) {
    io.out(SERVE_HELP);
    return null;
  }
  const o: ServeOptions = { log: (line) => io.out(line), ...residencyOptions(values) };
  if (values.host !== undefined) {
    if (!values.host.trim()) throw new UsageError('serve: --host must not be empty');
    o.host = values.host;
  }
  const port = intFlag('serve', 'port', values.port, 0, 65535);
  if (port !== undefined) o.port = port;
  if (values['data-dir'] !== undefined) o.dataDir = values['data-dir'];
  if (values.catalog !== undefined) o.catalog = values.catalog;
  if (values.models !== undefined) {
    const ids = values.models.split(',').map((s) => s.trim()).filter(Boolean);
    if (!ids.length) throw new UsageError('serve: --models needs at least one model id');
    o.models = ids;
  }
  if (values.device !== undefined) {
    if (!(DEVICES as readonly string[]).includes(values.device)) {
      throw new UsageError(`serve: --device must be one of ${DEVICES.join(', ')} (got "${values.device}")`);
    }
    o.device = values.device as Device;
  }
  const rateLimit = intFlag('serve', 'rate-limit', values['rate-limit'], 1);
  if (rateLimit !== undefined) o.rateLimit = rateLimit;
  const cap = numberFlag('serve', 'sandbox-cap-usd', values['sandbox-cap-usd'], 0);
  if (cap !== undefined) o.sandboxCapUsd = cap;
  const maxBody = intFlag('serve', 'max-body-bytes', values['max-body-bytes'], 1);
  if (maxBody !== undefined) o.maxBodyBytes = maxBody;
  const maxInputs = intFlag('serve', 'max-embedding-inputs', values['max-embedding-inputs'], 1);
  if (maxInputs !== undefined) o.maxEmbeddingInputs = maxInputs;
  const maxTokens = intFlag('serve', 'max-embedding-tokens', values['max-embedding-tokens'], 1);
  if (maxTokens !== undefined) o.maxEmbeddingTokens = maxTokens;
  const maxGenerations = intFlag('serve', 'max-generations', values['max-generations'], 1);
  if (maxGenerations !== undefined) o.maxGenerations = maxGenerations;
  const maxImages = intFlag('serve', 'max-images', values['max-images'], 0);
  if (maxImages !== undefined) o.maxImages = maxImages;
  const maxImageBytes = intFlag('serve', 'max-image-bytes', values['max-image-bytes'], 1);
  if (maxImageBytes !== undefined) o.maxImageBytes = maxImageBytes;
  const maxImagePixels = intFlag('serve', 'max-image-pixels', values['max-image-pixels'], 1);
  if (maxImagePixels !== undefined) o.maxImagePixels = maxImagePixels;
  const maxAudioBytes = intFlag('serve', 'max-audio-bytes', values['max-audio-bytes'], 1);
  if (maxAudioBytes !== undefined) o.maxAudioBytes = maxAudioBytes;
  const maxAudioSeconds = intFlag('serve', 'max-audio-seconds', values['max-audio-seconds'], 1);
  if (maxAudioSeconds !== undefined) o.maxAudioSeconds = maxAudioSeconds;
  if (values['image-url-hosts'] !== undefined) {
    const hosts = values['image-url-hosts'].split(',').map((h) => h.trim().toLowerCase()).filter(Boolean);
    const bad = hosts.find((h) => !/^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:]+\](:\d{1,5})?$/.test(h));
    if (bad !== undefined) throw new UsageError(`serve: --image-url-hosts takes host names or name:port, comma-separated (got "${bad}")`);
    o.imageUrlHosts = hosts;
  }
  const kvMb = intFlag('serve', 'kv-cache-mb', values['kv-cache-mb'], 0);
  if (kvMb !== undefined) o.kvCacheMb = kvMb;
  if (values.speculative !== undefined) {
    if (!(SPECULATIVE_MODES as readonly string[]).includes(values.speculative)) {
      throw new UsageError(`serve: --speculative must be one of ${SPECULATIVE_MODES.join(', ')} (got "${values.speculative}")`);
    }
    o.speculative = values.speculative as SpeculativeMode;
  }
  const threads = intFlag('serve', 'threads', values.threads, 1);
  if (threads !== undefined) o.threads = threads;
  if (values['metrics-key'] !== undefined) {
    if (!values['metrics-key'].trim()) throw new UsageError('serve: --metrics-key must not be empty');
    o.metricsKey = values['metrics-key'];
  }
  if (values['log-level'] !== undefined) {
    const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
    if (!levels.includes(values['log-level'])) throw new UsageError(`serve: --log-level must be one of ${levels.join(', ')}`);
    o.logLevel = values['log-level'];
  }
  const perAccount = intFlag('serve', 'responses-per-account', values['responses-per-account'], 1);
  const days = numberFlag('serve', 'responses-max-age-days', values['responses-max-age-days'], 0);
  if (days === 0) throw new UsageError('serve: --responses-max-age-days must be a number > 0 (got "0")');
  if (perAccount !== undefined || days !== undefined) {
    o.responseRetention = { ...(perAccount !== undefined ? { perAccount } : {}), ...(days !== undefined ? { maxAgeMs: days * 86_400_000 } : {}) };
  }
  if (values.store !== undefined) {
    const s = values.store;
    if (s !== 'file' && s !== 'memory' && !/^rediss?:\/\//i.test(s)) {
      throw new UsageError(`serve: --store must be file, memory or a redis:// URL (got "${s}")`);
    }
    o.store = s;
  }
  return o;
}

/** Resolves once the server has been closed by a signal (the process exits then). */
export async function serveCommand(args: string[], io: Io): Promise<number> {
  const options = serveOptions(args, io);
  if (!options) return 0;
  // Without an adapter every model would fail to load while the server ran on: one line, exit 1.
  if (options.device === 'webgpu') {
    const { webgpuAdapterProblem } = await import('../../backends/node-webgpu-probe.js');
    const problem = await webgpuAdapterProblem();
    if (problem) throw new CliError(problem);
  }
  // Loaded lazily: the other commands must not pay for (or depend on) the server and engine.
  const { serve, DRAIN_MS } = await import('../../front/node/serve.js');
  // Hub repos named by --models download before the server starts: a bar per file.
  let bars: ProgressView | undefined;
  options.onDownload = (p) => (bars ??= downloadBars()).update(p);
  const server = await serve(options).finally(() => bars?.stop()).catch((err: Error) => {
    // Under `npm start` the flag goes after "--", which the message cannot know.
    if (process.env.npm_lifecycle_event === 'start' && /--port 0/.test(err.message)) err.message += ' (with npm start: npm start -- --port 0)';
    throw err;
  });
  return new Promise<number>((resolve) => {
    let closing = false;
    const stop = (signal: NodeJS.Signals) => {
      if (closing) {
        io.err(`Received ${signal} again; exiting without waiting.`);
        process.exit(1);
      }
      closing = true;
      io.err(`Received ${signal}; shutting down.`);
      // close() ends within the drain deadline by itself; should anything still hang, the
      // process goes anyway, a little after it (nothing may outlive a stop).
      setTimeout(() => {
        io.err('hearth: serve: shutting down took longer than the drain deadline; exiting now.');
        process.exit(1);
      }, (options.drainMs ?? DRAIN_MS) + 5_000).unref();
      server.close().then(
        () => resolve(0),
        (err: unknown) => {
          io.err(`hearth: serve: error while shutting down: ${(err as Error)?.message ?? String(err)}`);
          resolve(1);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
