import type { Access } from './access/types.js';
import type { ImageUrlPolicy } from './api/image-urls.js';
import type { CatalogEntry, EngineApi, ModelState, ModelTask } from './engine/protocol.js';
import type { Upstreams } from './upstream/registry.js';
import type { UpstreamSpec } from './upstream/types.js';

/** What the router needs from the runtime it serves. Built by createRuntime (Node)
 * or the in-page starter (browser); the router does not care which. */
export interface Runtime {
  engine: EngineApi;
  access: Access;
  /** The catalog entries being served, for prices and metadata. */
  catalog(): CatalogEntry[];
  close(): Promise<void>;
  /** Model operations behind /admin/models (the Node server has them); absent: those routes answer 404. */
  admin?: ModelAdmin;
  /** Told about every response and generation (metrics, logs). Must not throw. */
  observer?: Observer;
  /** Renders /metrics; absent: /metrics answers 404. */
  metrics?: MetricsSource;
  /** Models served by upstream engines (their requests are forwarded); absent: none. */
  upstreams?: Upstreams;
  /** Where the engine runs, for /health (the in-page runtime: a SharedWorker or this tab's own worker). */
  engineHome?(): Promise<{ kind: 'shared' | 'dedicated'; pages: number }>;
  /** Announced incidents for /status, newest first. */
  incidents?(): Promise<Announcement[]>;
}

/** POST /admin/models. Anything left out is read from the checkpoint. */
export interface AddModelRequest {
  id: string;
  /** A local folder (absolute, or relative to the server's working directory) or a hub repo id. */
  from?: string;
  /** Instead of `from`: forward the model to an OpenAI-speaking upstream. */
  upstream?: UpstreamSpec;
  task?: ModelTask;
  context_length?: number;
  class?: string;
  dtype?: CatalogEntry['dtype'];
  price?: CatalogEntry['price'];
}

export interface ModelAdmin {
  /** Validates the checkpoint, starts serving it and records it in the served catalog. */
  add(req: AddModelRequest): Promise<ModelState>;
  remove(id: string): Promise<void>;
  redeploy(id: string): Promise<ModelState>;
  /** Every model with its detail and download progress. */
  list(): Promise<ModelState[]>;
}

export interface RequestEvent {
  requestId: string;
  method: string;
  /** The route pattern ("/v1/chat/completions", "/admin/models/:id{.+}"), or "unmatched". */
  route: string;
  status: number;
  /** Time to the response's headers. */
  durationMs: number;
  /** What went wrong behind a 500 (an internal fault): for the operator's log, never for the client. */
  error?: { type: string; message: string; stack?: string };
}

export interface Observer {
  request(ev: RequestEvent): void;
  /** Tokens of a request served by an upstream (the engine's own are measured where they run). */
  upstreamTokens?(model: string, promptTokens: number, completionTokens: number): void;
}

export interface MetricsSource {
  /** A bearer token /metrics requires; undefined: open. */
  key?: string;
  render(): Promise<{ contentType: string; body: string }>;
}

/** An incident announced by an operator (`hearth incident add`). */
export interface Announcement {
  at: string; // ISO time
  text: string;
}

export interface RouterOptions {
  /** Largest request body accepted, in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** Most inputs in one embeddings request (default 2,048, OpenAI's). */
  maxEmbeddingInputs?: number;
  /** Most tokens of one embeddings request's inputs in all (default 300,000, OpenAI's). */
  maxEmbeddingTokens?: number;
  /** Most generations one request may start, prompts × n (default 128). */
  maxGenerations?: number;
  /** Most images in one request (default 16). */
  maxImages?: number;
  /** Largest image, in bytes once decoded from its data: URL (default 20,000,000). */
  maxImageBytes?: number;
  /** Image URLs the router may fetch besides data: URLs: http(s) hosts (`hearth serve
   * --image-url-hosts`), or the page's own blob: and same-origin URLs (hearth/browser sets it). */
  imageUrls?: ImageUrlPolicy;
  /** Largest audio file of /v1/audio/transcriptions and /translations, in bytes (default 26,214,400,
   * OpenAI's 25 MiB); those routes' bodies are bounded by it (plus maxBodyBytes for the form's other
   * fields), not by maxBodyBytes alone. */
  maxAudioBytes?: number;
  /** Longest audio one transcription or translation may carry, in seconds (default 3,600). */
  maxAudioSeconds?: number;
  /** Decodes an uploaded audio file to mono 16 kHz samples where the front door can do it natively
   * (the page's Web Audio, on the page thread: every format the browser plays, AAC included);
   * undefined, or a failure, leaves the file to the engine's decoders. */
  decodeAudio?: (bytes: Uint8Array) => Promise<Float32Array | undefined>;
  /** Prefix the OpenAI routes are mounted under (default "/v1"). */
  basePath?: string;
}
