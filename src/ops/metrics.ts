// Prometheus metrics for the Node server (prom-client). The router reports each
// response through Runtime.observer; generations are timed by wrapping the engine
// (time to first token, time per output token, tokens in and out); model states,
// queue depth and KV cache use are read from the engine at scrape time.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { EngineApi, GenerateRequest, TokenEvent } from '../engine/protocol.js';
import type { MetricsSource, Observer, RequestEvent } from '../types.js';
import type { Upstreams } from '../upstream/registry.js';
import type { UpstreamObserver } from '../upstream/types.js';

const STATUSES = ['ready', 'starting', 'redeploying', 'failed', 'unloaded', 'loading'] as const;

export interface Metrics {
  registry: Registry;
  observer: Observer;
  source: MetricsSource;
  /** The engine with its generations, embeddings and scores measured. */
  wrap<E extends EngineApi>(engine: E): E;
  /** Where model states and load figures come from at scrape time. */
  setEngine(engine: EngineApi): void;
  /** Told about each upstream call (latency, errors). */
  upstream: UpstreamObserver;
  /** Where upstream URLs' health comes from at scrape time. */
  setUpstreams(upstreams: Upstreams): void;
}

export function createMetrics(opts: { key?: string; defaultMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'hearth_' });
  let engine: EngineApi | undefined;
  let upstreams: Upstreams | undefined;

  const requests = new Counter({
    name: 'hearth_http_requests_total',
    help: 'HTTP responses by method, route and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'hearth_http_request_duration_seconds',
    help: 'Time to the response headers, by route.',
    labelNames: ['route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const promptTokens = new Counter({
    name: 'hearth_prompt_tokens_total',
    help: 'Tokens in: prompts of generations, inputs of embeddings and pairs scored.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const completionTokens = new Counter({
    name: 'hearth_completion_tokens_total',
    help: 'Tokens out: generated tokens (those of cancelled generations included).',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const scoredPairs = new Counter({
    name: 'hearth_scored_pairs_total',
    help: 'Pairs a cross-encoder scored (a rerank scores one a document), per model.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const ttft = new Histogram({
    name: 'hearth_time_to_first_token_seconds',
    help: 'From handing a generation to the engine to its first token.',
    labelNames: ['model'] as const,
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  const perToken = new Histogram({
    name: 'hearth_time_per_output_token_seconds',
    help: 'Time between output tokens after the first.',
    labelNames: ['model'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });
  const modelStatus = new Gauge({
    name: 'hearth_model_status',
    help: '1 for the state each model is in (ready, starting, redeploying, failed), 0 for the others.',
    labelNames: ['model', 'status'] as const,
    registers: [registry],
  });
  const queue = new Gauge({
    name: 'hearth_queue_depth',
    help: 'Sequences waiting for their first step, per model.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const active = new Gauge({
    name: 'hearth_active_sequences',
    help: 'Sequences being generated now, per model.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const kvUsed = new Gauge({
    name: 'hearth_kv_cache_bytes',
    help: 'KV cache bytes held, per model (where the engine reports it).',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const kvCapacity = new Gauge({
    name: 'hearth_kv_cache_capacity_bytes',
    help: 'KV cache budget in bytes, per model (where the engine reports it).',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const kvEntries = new Gauge({
    name: 'hearth_kv_cache_entries',
    help: 'Prompts the prefix cache holds, per model (where the engine reports it).',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const grammarEntries = new Gauge({
    name: 'hearth_grammar_cache_entries',
    help: "Compiled grammars (structured outputs, tools) a model keeps; their bytes are in XGrammar's WASM heap, counted in hearth_engine_external_bytes.",
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const grammarCapacity = new Gauge({
    name: 'hearth_grammar_cache_capacity_entries',
    help: 'Compiled grammars a model may keep; the least recently used is freed first.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const stepSeconds = new Gauge({
    name: 'hearth_step_seconds_total',
    help: "Seconds the model's step loop has spent in each phase (graph, feeds, logits, repack, sample, emit, ...), per model.",
    labelNames: ['model', 'phase'] as const,
    registers: [registry],
  });
  const decodeSteps = new Gauge({
    name: 'hearth_decode_steps_total',
    help: 'Decode steps run, per model.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const decodeRows = new Gauge({
    name: 'hearth_decode_rows_total',
    help: 'Sequence rows decoded over all steps, per model (rows / steps = mean batch).',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const kvDeviceReads = new Gauge({
    name: 'hearth_kv_device_reads_total',
    help: 'KV caches read back from the device to the host, per model (WebGPU: only sequences the prefix cache stores; never a decode step).',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const specDrafted = new Gauge({
    name: 'hearth_spec_drafted_tokens_total',
    help: 'Tokens drafted for speculative decoding (prompt lookup), per model.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const specAccepted = new Gauge({
    name: 'hearth_spec_accepted_tokens_total',
    help: 'Drafted tokens the model accepted, per model: output tokens that took no decode step of their own.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  // On-demand loading. The engine counts its loads and unloads; they are read at scrape time (as
  // the step counters above are), so they restart from 0 with a restarted engine worker.
  const modelLoads = new Gauge({
    name: 'hearth_model_loads_total',
    help: 'Loads of each model finished so far (the first included), per model.',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const modelUnloads = new Gauge({
    name: 'hearth_model_unloads_total',
    help: "Unloads of each model so far, by reason: keep_alive (a request's keep_alive 0), idle (its keep-alive passed), evicted (room for another model), admin.",
    labelNames: ['model', 'reason'] as const,
    registers: [registry],
  });
  const modelsLoaded = new Gauge({
    name: 'hearth_models_loaded',
    help: 'Models holding their sessions now.',
    registers: [registry],
  });
  const loadSeconds = new Gauge({
    name: 'hearth_model_load_seconds',
    help: "Seconds each model's last load took.",
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const engineHeap = new Gauge({
    name: 'hearth_engine_heap_bytes',
    help: "JS heap in use in the engine's thread (its worker), garbage not yet collected included.",
    registers: [registry],
  });
  const engineExternal = new Gauge({
    name: 'hearth_engine_external_bytes',
    help: "Memory the engine's thread holds outside its JS heap: ArrayBuffers (the prefix cache's KV among them) and WASM memories (XGrammar's, which never shrink).",
    registers: [registry],
  });

  const upstreamLatency = new Histogram({
    name: 'hearth_upstream_request_duration_seconds',
    help: "Time to an upstream's response headers (or its failure), per model and URL.",
    labelNames: ['model', 'url'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const upstreamErrors = new Counter({
    name: 'hearth_upstream_errors_total',
    help: 'Upstream calls that failed (refused, timed out, 5xx, refused key), per model and URL.',
    labelNames: ['model', 'url'] as const,
    registers: [registry],
  });
  const upstreamHealthy = new Gauge({
    name: 'hearth_upstream_healthy',
    help: '1 while an upstream URL answers its probes, 0 when not (absent before the first probe).',
    labelNames: ['model', 'url'] as const,
    registers: [registry],
  });

  function collectUpstreams(): void {
    upstreamHealthy.reset();
    for (const t of upstreams?.targets() ?? []) {
      if (t.healthy !== null) upstreamHealthy.set({ model: t.model, url: t.url }, t.healthy ? 1 : 0);
    }
  }

  async function collectEngine(): Promise<void> {
    if (!engine) return;
    modelStatus.reset();
    queue.reset();
    active.reset();
    kvUsed.reset();
    kvCapacity.reset();
    kvEntries.reset();
    grammarEntries.reset();
    grammarCapacity.reset();
    stepSeconds.reset();
    decodeSteps.reset();
    decodeRows.reset();
    kvDeviceReads.reset();
    specDrafted.reset();
    specAccepted.reset();
    engineHeap.reset();
    engineExternal.reset();
    modelLoads.reset();
    modelUnloads.reset();
    modelsLoaded.reset();
    loadSeconds.reset();
    const models = await engine.models().catch(() => []);
    for (const m of models) for (const s of STATUSES) modelStatus.set({ model: m.id, status: s }, m.status === s ? 1 : 0);
    const stats = await engine.stats?.().catch(() => undefined);
    for (const s of stats?.models ?? []) {
      queue.set({ model: s.id }, s.queued);
      active.set({ model: s.id }, s.active);
      if (s.kv_cache_bytes !== undefined) kvUsed.set({ model: s.id }, s.kv_cache_bytes);
      if (s.kv_cache_capacity_bytes !== undefined) kvCapacity.set({ model: s.id }, s.kv_cache_capacity_bytes);
      if (s.kv_cache_entries !== undefined) kvEntries.set({ model: s.id }, s.kv_cache_entries);
      if (s.grammar_cache_entries !== undefined) grammarEntries.set({ model: s.id }, s.grammar_cache_entries);
      if (s.grammar_cache_capacity !== undefined) grammarCapacity.set({ model: s.id }, s.grammar_cache_capacity);
      for (const [phase, ms] of Object.entries(s.step_ms ?? {})) stepSeconds.set({ model: s.id, phase }, ms / 1000);
      if (s.decode_steps !== undefined) decodeSteps.set({ model: s.id }, s.decode_steps);
      if (s.decode_rows !== undefined) decodeRows.set({ model: s.id }, s.decode_rows);
      if (s.kv_device_reads !== undefined) kvDeviceReads.set({ model: s.id }, s.kv_device_reads);
      if (s.spec_drafted_tokens !== undefined) specDrafted.set({ model: s.id }, s.spec_drafted_tokens);
      if (s.spec_accepted_tokens !== undefined) specAccepted.set({ model: s.id }, s.spec_accepted_tokens);
      if (s.loads !== undefined) modelLoads.set({ model: s.id }, s.loads);
      if (s.loads) loadSeconds.set({ model: s.id }, s.last_load_seconds ?? 0);
      for (const reason of ['keep_alive', 'idle', 'evicted', 'admin'] as const) {
        if (s.unloads) modelUnloads.set({ model: s.id, reason }, s.unloads[reason] ?? 0);
      }
    }
    if (stats) modelsLoaded.set(stats.models.filter((s) => s.loaded).length);
    if (stats?.memory) {
      engineHeap.set(stats.memory.heap_used_bytes);
      engineExternal.set(stats.memory.external_bytes);
    }
  }

  const observer: Observer = {
    request(ev: RequestEvent) {
      requests.inc({ method: ev.method, route: ev.route, status: String(ev.status) });
      duration.observe({ route: ev.route }, ev.durationMs / 1000);
    },
    upstreamTokens(model, prompt, completion) {
      promptTokens.inc({ model }, prompt);
      completionTokens.inc({ model }, completion);
    },
  };

  function wrap<E extends EngineApi>(inner: E): E {
    const generate = (req: GenerateRequest, onToken: (ev: TokenEvent) => void) => {
      const model = req.model;
      const start = performance.now();
      let last: number | undefined;
      let promptSeen = false;
      const timed = (ev: TokenEvent) => {
        const n = ev.token_ids.length;
        if (ev.prompt_tokens !== undefined && !promptSeen) {
          promptSeen = true;
          promptTokens.inc({ model }, ev.prompt_tokens);
        }
        if (n > 0) {
          const now = performance.now();
          if (last === undefined) ttft.observe({ model }, (now - start) / 1000);
          else perToken.observe({ model }, (now - last) / 1000 / n);
          last = now;
          completionTokens.inc({ model }, n);
        }
        onToken(ev);
      };
      return inner.generate(req, timed).then((r) => {
        if (!promptSeen) promptTokens.inc({ model }, r.prompt_tokens);
        return r;
      });
    };
    const embed: EngineApi['embed'] = (req) =>
      inner.embed(req).then((r) => {
        promptTokens.inc({ model: req.model }, r.prompt_tokens);
        return r;
      });
    const score: EngineApi['score'] = (req) =>
      inner.score(req).then((r) => {
        promptTokens.inc({ model: req.model }, r.prompt_tokens);
        scoredPairs.inc({ model: req.model }, req.pairs.length);
        return r;
      });
    // Everything else is the engine's own, called on the engine itself.
    return new Proxy(inner, {
      get(target, prop) {
        if (prop === 'generate') return generate;
        if (prop === 'embed') return embed;
        if (prop === 'score') return score;
        const v = Reflect.get(target, prop, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  return {
    registry,
    observer,
    wrap,
    setEngine: (e) => void (engine = e),
    upstream: {
      call(ev) {
        upstreamLatency.observe({ model: ev.model, url: ev.url }, ev.ms / 1000);
        if (!ev.ok) upstreamErrors.inc({ model: ev.model, url: ev.url });
      },
    },
    setUpstreams: (u) => void (upstreams = u),
    source: {
      key: opts.key,
      async render() {
        await collectEngine();
        collectUpstreams();
        return { contentType: registry.contentType, body: await registry.metrics() };
      },
    },
  };
}
