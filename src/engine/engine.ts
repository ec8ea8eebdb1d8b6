import type { Backend } from '../backends/types.js';
import { embedInBatches } from './embed-batches.js';
import { EngineError } from './errors.js';
import { DEFAULT_KV_CACHE_MB, ModelHost, type LoadedModel } from './model-host.js';
import type { EngineOptions } from './options.js';
import { Residency } from './residency.js';

export type { EngineOptions };
import type {
  CatalogEntry,
  CountRequest,
  DetokenizeRequest,
  EmbedRequest,
  EmbedResult,
  EngineApi,
  EngineStats,
  GenerateRequest,
  GenerateResult,
  ModelTask,
  PromptInput,
  ScoreRequest,
  ScoreResult,
  TokenEvent,
  TokenizeRequest,
  TranscribeRequest,
  TranscribeResult,
  TranscriptDelta,
} from './protocol.js';
import { scoreInBatches } from './score-batches.js';
import { Sequence } from './sequence.js';
import { cachedGrammars, GRAMMAR_CACHE_SIZE, grammarsFor, setXGrammarLoader } from './structured/index.js';
import type { TextCodec } from './text/codec.js';
import { thinkingGate } from './thinking/index.js';
import { detokenize, encodeChat, tokenize } from './tokens.js';
import { chatImages } from './text/content.js';
import type { ImageDecoder, VisionPrompt } from './vision/vision-model.js';

const noDecoder: ImageDecoder = () => Promise.reject(new Error('no image decoder'));

/** Every task: each model has a tokenizer. */
const ALL_TASKS: ModelTask[] = ['chat', 'completion', 'embedding', 'rerank', 'transcription'];

/**
 * The engine as the worker exposes it: finds the model, turns the prompt into
 * tokens, checks it fits, and hands a Sequence to that model's scheduler.
 */

export function createEngine(backend: Backend, options: EngineOptions = {}): EngineApi {
  if (backend.loadXGrammar) setXGrammarLoader(backend.loadXGrammar);
  const hosts = new Map<string, ModelHost>();
  // A model's draft is another catalog entry, looked up when the model loads.
  const hostOptions = { ...options, entryOf: (id: string) => hosts.get(id)?.entry };
  /** Removed models still finishing their requests in flight. */
  const retiring = new Set<ModelHost>();
  // When models load and unload (on demand, keep-alive, LRU eviction within the limits).
  const residency = new Residency(() => hosts.values(), options);
  const lazy = options.load === 'on-demand';

  function hostOf(id: string, tasks: ModelTask[]): ModelHost {
    const host = hosts.get(id);
    if (!host) throw new EngineError('model_not_found', `The model \`${id}\` does not exist`, 'model');
    if (!tasks.includes(host.entry.task)) {
      throw new EngineError('unsupported_task', `The model \`${id}\` is ${/^[aeiou]/.test(host.entry.task) ? 'an' : 'a'} ${host.entry.task} model`, 'model');
    }
    return host;
  }

  /**
   * Runs a request on its model: loads it first where it is not loaded (waiting within the load
   * timeout, room made by the residency policy), holds it loaded while the request runs, and
   * starts its keep-alive (the request's `keep_alive_ms`, else the server's) once it ends.
   */
  async function use<T>(
    id: string,
    tasks: ModelTask[],
    keepAliveMs: number | undefined,
    fn: (r: { host: ModelHost; model: LoadedModel }) => Promise<T>,
    /** A step before the request proper (admission's token count, /tokenize): it leaves the expiry to the request that follows. */
    aux = false,
  ): Promise<T> {
    const host = hostOf(id, tasks);
    await residency.acquire(host);
    try {
      return await fn(ready(id, tasks));
    } finally {
      residency.release(host, aux ? undefined : keepAliveMs, aux);
    }
  }

  /** A host made at run time: on demand it waits for its first request; eager, it loads now unless that would pass --max-loaded-models. */
  function newHost(entry: CatalogEntry): ModelHost {
    const host = new ModelHost(entry, backend, hostOptions, lazy || !residency.roomAtStart());
    void host.estimateBytes(); // size_mb, and the budget's figures, before the first load
    if (host.status === 'starting') void host.ready.then(() => residency.started(host));
    return host;
  }

  function ready(id: string, tasks: ModelTask[]): { host: ModelHost; model: LoadedModel } {
    const host = hosts.get(id);
    if (!host) throw new EngineError('model_not_found', `The model \`${id}\` does not exist`, 'model');
    if (host.status !== 'ready' || !host.loaded) {
      const why = host.status === 'failed' ? `failed to load: ${host.detail}` : `is ${host.status}`;
      throw new EngineError('model_not_ready', `The model \`${id}\` ${why}`, 'model', host.status === 'failed' ? 60 : 2);
    }
    if (!tasks.includes(host.entry.task)) {
      throw new EngineError('unsupported_task', `The model \`${id}\` is ${/^[aeiou]/.test(host.entry.task) ? 'an' : 'a'} ${host.entry.task} model`, 'model');
    }
    return { host, model: host.loaded };
  }

  /**
   * A prompt as token ids, its text, and the request field a fault in it is blamed on; a VLM's
   * chat also its images (decoded and processed here, encoded when its prompt prefills).
   */
  async function promptOf(model: LoadedModel, p: PromptInput): Promise<ReturnType<typeof encodePrompt> & Partial<VisionPrompt>> {
    if (!('messages' in p)) return encodePrompt(model.codec, p);
    const image = chatImages(p.messages)[0];
    if (!model.vision) {
      if (image) throw new EngineError('invalid_value', 'This model takes no images; send text parts only.', image.param);
      return encodePrompt(model.codec, p);
    }
    const decode = backend.decodeImage;
    if (!decode && image) throw new EngineError('invalid_value', 'This runtime cannot decode images.', 'messages');
    const vision = await model.vision.encodeChat(model.codec, p, decode ?? noDecoder, options.maxImagePixels);
    return { ...vision, param: 'messages' };
  }

  /** A generation on a loaded model: its prompt encoded and checked, then queued on the model's scheduler. */
  async function generateOn(host: ModelHost, model: LoadedModel, req: GenerateRequest, onToken: (ev: TokenEvent) => void): Promise<GenerateResult> {
    const { codec, lm, scheduler } = model;
    if (!lm || !scheduler) throw new EngineError('unsupported_task', `${req.model} cannot generate`, 'model');
    const { ids, text, param, images, cacheKey, rope } = await promptOf(model, req.prompt);
    if (ids.length === 0) throw new EngineError('invalid_value', 'The prompt is empty', param);
    const bad = ids.find((id) => !Number.isInteger(id) || id < 0 || id >= lm.vocabSize);
    if (bad !== undefined) throw new EngineError('invalid_value', `Token id ${bad} is outside the vocabulary`, param);
    const ctx = host.entry.context_length;
    const asked = req.sampling.max_tokens;
    if (asked !== undefined && ids.length + asked > ctx) {
      throw new EngineError(
        'context_length_exceeded',
        `This model's maximum context length is ${ctx} tokens. However, you requested ` +
          `${ids.length + asked} tokens (${ids.length} in the prompt, ` +
          `${asked} for the completion). Please reduce the prompt or max_tokens.`,
        param,
      );
    }
    if (ids.length >= ctx) {
      throw new EngineError('context_length_exceeded', `The prompt has ${ids.length} tokens; this model's maximum context length is ${ctx}`, param);
    }
    const grammar = req.sampling.grammar;
    const constraint = (grammar && (await grammarsFor(codec, lm.vocabSize, lm.eosIds).constraint(grammar))) || undefined;
    // A reasoning model's reply is followed through its think block; a grammar applies to the answer only.
    const thinking = model.thinks ? thinkingGate(codec, text, lm.eosIds, constraint) : undefined;
    const emit = (ev: TokenEvent) => {
      const t0 = performance.now();
      onToken(thinking && ev.prompt_tokens !== undefined ? { ...ev, thinking: thinking.start } : ev);
      scheduler.timings.lap('emit', t0);
    };
    const seq = new Sequence(req, ids, text, codec, { eosIds: lm.eosIds, contextLength: ctx }, emit, thinking?.gate ?? constraint, { images, cacheKey, rope });
    scheduler.submit(seq);
    if (!thinking) return seq.result;
    const { start, gate } = thinking;
    return seq.result.then((r) => ({ ...r, thinking: start, reasoning_tokens: gate.tracker.reasoningTokens }));
  }

  function countOn(model: LoadedModel, req: CountRequest): Promise<number[]> {
    // The encoding generate and embed run, so the count is the one they will charge.
    return Promise.all(
      req.prompts.map(async (p) => {
        if ('tokens' in p) return p.tokens.length;
        if ('text' in p) return model.codec.encodeText(p.text).length;
        return (await promptOf(model, p)).ids.length;
      }),
    );
  }

  async function embedOn(host: ModelHost, model: LoadedModel, req: EmbedRequest): Promise<EmbedResult> {
    const ids = req.input.map((x) => (typeof x === 'string' ? model.codec.encodeText(x) : x));
    const total = ids.reduce((n, s) => n + s.length, 0);
    if (req.max_total_tokens !== undefined && total > req.max_total_tokens) {
      throw new EngineError('invalid_value', `The inputs have ${total} tokens in all; one request may have at most ${req.max_total_tokens}`, 'input');
    }
    const ctx = host.entry.context_length;
    ids.forEach((seq, i) => {
      if (seq.length === 0) throw new EngineError('invalid_value', `input[${i}] is empty`, 'input');
      if (seq.length > ctx) {
        throw new EngineError(
          'context_length_exceeded',
          `input[${i}] has ${seq.length} tokens; this model's maximum is ${ctx}`,
          'input',
        );
      }
      if (seq.some((t) => !Number.isInteger(t) || t < 0 || t >= model.codec.vocabSize)) {
        throw new EngineError('invalid_value', `input[${i}] has a token id outside the vocabulary`, 'input');
      }
    });
    const data = await host.embedding(model, () => embedInBatches(model.encoder!, ids));
    return { data, prompt_tokens: total };
  }

  async function scoreOn(host: ModelHost, model: LoadedModel, req: ScoreRequest): Promise<ScoreResult> {
    const { scorer, pairs } = model;
    if (!scorer || !pairs) throw new EngineError('unsupported_task', `${req.model} cannot score pairs`, 'model');
    // Each pair cut to the model's length (longest first) before it is counted or run.
    const encoded = req.pairs.map(([a, b]) => pairs.encode(a, b));
    const scores = await host.embedding(model, () => scoreInBatches(scorer, encoded));
    return { scores: Array.from(scores), prompt_tokens: encoded.reduce((n, p) => n + p.ids.length, 0) };
  }

  return {
    async load(entries: CatalogEntry[]) {
      for (const entry of entries) {
        if (!hosts.has(entry.id)) hosts.set(entry.id, newHost(entry));
      }
    },

    async models() {
      // Each estimate is read once from its files (size_mb), so this waits only the first time.
      await Promise.all([...hosts.values()].map((h) => h.estimateBytes()));
      return [...hosts.values()].map((h) => h.state());
    },

    generate(req: GenerateRequest, onToken: (ev: TokenEvent) => void): Promise<GenerateResult> {
      return use(req.model, ['chat', 'completion'], req.keep_alive_ms, ({ host, model }) => generateOn(host, model, req, onToken));
    },

    async countTokens(req: CountRequest) {
      return use(req.model, ALL_TASKS, undefined, async ({ model }) => countOn(model, req), true);
    },

    // Any local model's tokenizer, whatever its task (vLLM tokenizes for every model it serves).
    async tokenize(req: TokenizeRequest) {
      return use(req.model, ALL_TASKS, undefined, async ({ model }) => {
        // A VLM's chat: its images expanded to their tokens, as generate runs it.
        if (model.vision && 'messages' in req.prompt && req.add_generation_prompt !== false) {
          const { ids } = await promptOf(model, req.prompt);
          return req.return_token_strs ? { tokens: ids, token_strs: ids.map((id) => model.codec.tokenPiece(id)) } : { tokens: ids };
        }
        return tokenize(model.codec, req);
      }, true);
    },

    async detokenize(req: DetokenizeRequest) {
      return use(req.model, ALL_TASKS, undefined, async ({ model }) => detokenize(model.codec, req.tokens), true);
    },

    async cancel(id: string) {
      for (const h of [...hosts.values(), ...retiring]) {
        h.loaded?.scheduler?.cancel(id);
        h.loaded?.speech?.cancel(id);
      }
    },

    async embed(req: EmbedRequest): Promise<EmbedResult> {
      return use(req.model, ['embedding'], req.keep_alive_ms, ({ host, model }) => embedOn(host, model, req));
    },

    async score(req: ScoreRequest): Promise<ScoreResult> {
      return use(req.model, ['rerank'], req.keep_alive_ms, ({ host, model }) => scoreOn(host, model, req));
    },

    // The file is decoded, cut into windows and transcribed on the worker; counted in flight like an embedding call.
    async transcribe(req: TranscribeRequest, onDelta?: (ev: TranscriptDelta) => void): Promise<TranscribeResult> {
      return use(req.model, ['transcription'], req.keep_alive_ms, ({ host, model }) => {
        if (!model.speech) throw new EngineError('unsupported_task', `${req.model} cannot transcribe`, 'model');
        return host.embedding(model, () => model.speech!.transcribe(req, onDelta));
      });
    },

    async loadModel(id: string) {
      const host = hosts.get(id);
      if (!host) throw new EngineError('model_not_found', `The model \`${id}\` does not exist`, 'id');
      await residency.load(host);
      return host.state();
    },

    async unloadModel(id: string, opts: { force?: boolean } = {}) {
      const host = hosts.get(id);
      if (!host) throw new EngineError('model_not_found', `The model \`${id}\` does not exist`, 'id');
      await residency.unload(host, 'admin', opts);
      return host.state();
    },

    async add(entry: CatalogEntry) {
      if (hosts.has(entry.id)) throw new EngineError('invalid_value', `The model \`${entry.id}\` already exists`, 'id');
      const host = newHost(entry);
      hosts.set(entry.id, host);
      return host.state();
    },

    async remove(id: string) {
      const host = hosts.get(id);
      if (!host) throw new EngineError('model_not_found', `The model \`${id}\` does not exist`, 'id');
      hosts.delete(id); // new requests: model_not_found from now on
      retiring.add(host); // its requests in flight can still be cancelled
      try {
        await host.remove();
      } finally {
        retiring.delete(host);
      }
    },

    async redeploy(id: string, entry?: CatalogEntry) {
      const host = hosts.get(id);
      if (!host) throw new EngineError('model_not_found', `The model \`${id}\` does not exist`, 'id');
      if (entry && entry.id !== id) throw new EngineError('invalid_value', `The entry is for ${entry.id}, not ${id}`, 'id');
      void host.redeploy(entry);
      // redeploy() sets the status once the previous load has settled; show it at once.
      if (host.status === 'ready') host.status = 'redeploying';
      return host.state();
    },

    async stats(): Promise<EngineStats> {
      // Node reports the heap and external memory of the calling thread; a browser has no `process`.
      const usage = (globalThis as { process?: { memoryUsage?(): { heapUsed: number; external: number } } }).process?.memoryUsage?.();
      return {
        ...(usage ? { memory: { heap_used_bytes: usage.heapUsed, external_bytes: usage.external } } : {}),
        models: [...hosts.values()].map((h) => {
          const s = h.loaded?.scheduler?.stats();
          const mb = options.kvCacheMb ?? DEFAULT_KV_CACHE_MB;
          return {
            id: h.entry.id,
            active: s ? s.running : h.inFlight(),
            queued: s?.waiting ?? 0,
            // The prefix cache's bytes and budget (what the engine holds between requests).
            ...(s && mb > 0 ? { kv_cache_bytes: s.kvCacheBytes, kv_cache_capacity_bytes: mb * 2 ** 20, kv_cache_entries: s.kvCacheEntries } : {}),
            // The grammars a generating model has compiled (structured outputs, tools).
            ...(s && h.loaded ? { grammar_cache_entries: cachedGrammars(h.loaded.codec), grammar_cache_capacity: GRAMMAR_CACHE_SIZE } : {}),
            loaded: h.loaded !== undefined,
            loads: h.counts.loads,
            last_load_seconds: h.counts.lastLoadSeconds,
            unloads: { ...h.counts.unloads },
            ...(s ? { kv_device_reads: s.kvDeviceReads, kv_prefix_cache_reads: s.kvPrefixCacheReads, step_ms: { ...s.timings.ms }, decode_steps: s.timings.steps, decode_rows: s.timings.rows, spec_drafted_tokens: s.specDrafted, spec_accepted_tokens: s.specAccepted } : {}),
          };
        }),
      };
    },

    async dispose() {
      residency.dispose();
      for (const h of hosts.values()) {
        h.loaded?.scheduler?.abortAll(new EngineError('model_not_ready', 'the engine is shutting down'));
        await h.dispose();
      }
      hosts.clear();
    },
  };
}

/** A prompt as token ids, its text, and the request field a fault in it is blamed on. */
function encodePrompt(codec: TextCodec, p: PromptInput): { ids: number[]; text: string; param: string } {
  if ('messages' in p) return { ...encodeChat(codec, p), param: 'messages' };
  if ('text' in p) return { ids: codec.encodeText(p.text), text: p.text, param: 'prompt' };
  return { ids: p.tokens, text: codec.decode(p.tokens), param: 'prompt' };
}
