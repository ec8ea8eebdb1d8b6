import type { ResponseRetention } from '../../access/access.js';
import type { Device, DownloadProgress } from '../../engine/protocol.js';
import type { SpeculativeMode } from '../../engine/spec/draft-policy.js';

/** Options of `hearth serve` and of `serve()` from `hearth/node`. */
export interface ServeOptions {
  host?: string; // default 127.0.0.1
  port?: number; // default 8080; 0 takes a free port
  /** Where keys, usage and the served catalog live (default ./.hearth). */
  dataDir?: string;
  /** A catalog JSON file (default models/catalog.json of the package). */
  catalog?: string;
  /** Serve only these: catalog ids, local checkpoint folders or hub repo ids (`org/name`); a folder
   * or repo is served as `svc/<its name>` and remembered in the data dir's served catalog. */
  models?: string[];
  /** Download progress of hub repos named in `models` (the CLI draws bars). */
  onDownload?: (p: DownloadProgress) => void;
  device?: Device; // default cpu
  /** Requests per minute per key (default 60). */
  rateLimit?: number;
  /** Monthly cap for sandbox accounts in USD (default 5). */
  sandboxCapUsd?: number;
  maxBodyBytes?: number; // default 1 MiB
  /** Most inputs in one embeddings request (default 2,048, OpenAI's). */
  maxEmbeddingInputs?: number;
  /** Most tokens of one embeddings request's inputs in all (default 300,000, OpenAI's). */
  maxEmbeddingTokens?: number;
  /** Most generations one request may start, prompts × n (default 128). */
  maxGenerations?: number;
  /** Images one chat request may hold (default 16). */
  maxImages?: number;
  /** An image's bytes (default 20,000,000; a 413 past it). */
  maxImageBytes?: number;
  /** An image's pixels (default 50,000,000; a 413 past it, before it is decoded). */
  maxImagePixels?: number;
  /** An audio file's bytes on /v1/audio/transcriptions and /translations (default 26,214,400; a 413 past it, while reading). */
  maxAudioBytes?: number;
  /** The longest audio one transcription or translation may carry, in seconds (default 3,600; a 400 past it). */
  maxAudioSeconds?: number;
  /** Hosts (name or name:port) whose http(s) image URLs may be fetched (default none: data: URLs only). */
  imageUrlHosts?: string[];
  /** Memory for each model's prefix cache in MiB (default 256; 0 turns it off). */
  kvCacheMb?: number;
  /** Speculative decoding where a catalog entry does not say (default 'ngram'). */
  speculative?: SpeculativeMode;
  /** CPU threads of each graph run (onnxruntime's intra-op threads; default one per core). */
  threads?: number;
  /** "file" (default), "memory", or a redis:// URL. */
  store?: string;
  /** Stored responses (/v1/responses) kept per account and for how long (default 1000, 30 days). */
  responseRetention?: ResponseRetention;
  /** Print the first key when the store has none (the CLI does; tests may not want it). */
  log?: (line: string) => void;
  /** A bearer token GET /metrics then requires (default: /metrics is open). */
  metricsKey?: string;
  /** JSON log level (pino): trace, debug, info (default), warn, error, fatal, silent. */
  logLevel?: string;
  /** How long shutdown lets in-flight requests finish before cutting them, in ms (default 10000). */
  drainMs?: number;
  /** `eager` (default): every listed model loads at start; `on-demand`: each is `unloaded` until its first request. */
  load?: 'eager' | 'on-demand';
  /** How long an idle model stays loaded after its last request, in ms; -1 = forever (default: -1 eager, 5 minutes on demand). */
  keepAliveMs?: number;
  /** The most models loaded at once (default: no limit): a load past it first unloads the least recently used idle model. */
  maxLoadedModels?: number;
  /** The most MiB the loaded models' estimates (weights + one context of KV) may add up to (default: no limit). */
  memoryBudgetMb?: number;
  /** How long a request waits for its model to load, in ms (default 120000); then 503 model_not_ready. */
  loadTimeoutMs?: number;
}

export const DEFAULT_DATA_DIR = '.hearth';
