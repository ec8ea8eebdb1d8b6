// /metrics over the router with the stub engine: Prometheus text with requests by
// route and status, tokens in and out, TTFT and per-token histograms, model states,
// queue depth and KV figures from the engine's stats(), and the --metrics-key guard.
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/ops/metrics.js';
import type { EngineStats } from '../../src/engine/protocol.js';
import { setup } from '../api/harness.js';

function withMetrics(key?: string) {
  const h = setup();
  const m = createMetrics({ key, defaultMetrics: false });
  const stats: EngineStats = { models: [{ id: 'svc/tiny-chat', active: 2, queued: 3, kv_cache_bytes: 1024, kv_cache_capacity_bytes: 4096, kv_cache_entries: 5, grammar_cache_entries: 12, grammar_cache_capacity: 64, step_ms: { graph: 1500, sample: 20 }, decode_steps: 100, decode_rows: 700, kv_device_reads: 6, kv_prefix_cache_reads: 6, spec_drafted_tokens: 50, spec_accepted_tokens: 40 }], memory: { heap_used_bytes: 40e6, external_bytes: 30e6 } };
  Object.assign(h.engine, { stats: async () => stats });
  m.setEngine(h.engine);
  h.runtime.engine = m.wrap(h.engine);
  h.runtime.observer = m.observer;
  h.runtime.metrics = m.source;
  return h;
}

/** The value of a sample line, e.g. value(text, 'hearth_prompt_tokens_total{model="svc/tiny-chat"}'). */
function value(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(sample + ' '));
  return line ? Number(line.slice(sample.length + 1)) : undefined;
}

describe('GET /metrics', () => {
  it('is 404 where the runtime exports no metrics', async () => {
    const { fetch } = setup();
    expect((await fetch('/metrics')).status).toBe(404);
  });

  it('counts requests by route and status, tokens in and out, and times first and later tokens', async () => {
    const { post, fetch, engine } = withMetrics();
    engine.script = () => ({ tokens: ['Hello', ' world', '!'], delayMs: 5, promptTokens: 7 });
    const ok = await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(ok.status).toBe(200);
    await post('/v1/chat/completions', { model: 'svc/nope', messages: [{ role: 'user', content: 'hi' }] });
    await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'hello there' });
    await fetch('/v1/models');
    const res = await fetch('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    expect(value(text, 'hearth_http_requests_total{method="POST",route="/v1/chat/completions",status="200"}')).toBe(1);
    expect(value(text, 'hearth_http_requests_total{method="POST",route="/v1/chat/completions",status="404"}')).toBe(1);
    expect(value(text, 'hearth_http_requests_total{method="GET",route="/v1/models",status="401"}')).toBe(1);
    expect(value(text, 'hearth_prompt_tokens_total{model="svc/tiny-chat"}')).toBe(7);
    expect(value(text, 'hearth_completion_tokens_total{model="svc/tiny-chat"}')).toBe(3);
    expect(value(text, 'hearth_prompt_tokens_total{model="svc/tiny-embed"}')).toBeGreaterThan(0);
    expect(value(text, 'hearth_time_to_first_token_seconds_count{model="svc/tiny-chat"}')).toBe(1);
    expect(value(text, 'hearth_time_per_output_token_seconds_count{model="svc/tiny-chat"}')).toBe(2);
    expect(value(text, 'hearth_time_to_first_token_seconds_sum{model="svc/tiny-chat"}')).toBeGreaterThan(0.003);
    expect(value(text, 'hearth_model_status{model="svc/tiny-chat",status="ready"}')).toBe(1);
    expect(value(text, 'hearth_model_status{model="svc/warming",status="starting"}')).toBe(1);
    expect(value(text, 'hearth_model_status{model="svc/warming",status="ready"}')).toBe(0);
    expect(value(text, 'hearth_queue_depth{model="svc/tiny-chat"}')).toBe(3);
    expect(value(text, 'hearth_active_sequences{model="svc/tiny-chat"}')).toBe(2);
    expect(value(text, 'hearth_kv_cache_bytes{model="svc/tiny-chat"}')).toBe(1024);
    expect(value(text, 'hearth_kv_cache_capacity_bytes{model="svc/tiny-chat"}')).toBe(4096);
    expect(value(text, 'hearth_kv_cache_entries{model="svc/tiny-chat"}')).toBe(5);
    expect(value(text, 'hearth_grammar_cache_entries{model="svc/tiny-chat"}')).toBe(12);
    expect(value(text, 'hearth_grammar_cache_capacity_entries{model="svc/tiny-chat"}')).toBe(64);
    expect(value(text, 'hearth_step_seconds_total{model="svc/tiny-chat",phase="graph"}')).toBe(1.5);
    expect(value(text, 'hearth_step_seconds_total{model="svc/tiny-chat",phase="sample"}')).toBe(0.02);
    expect(value(text, 'hearth_decode_steps_total{model="svc/tiny-chat"}')).toBe(100);
    expect(value(text, 'hearth_decode_rows_total{model="svc/tiny-chat"}')).toBe(700);
    expect(value(text, 'hearth_kv_device_reads_total{model="svc/tiny-chat"}')).toBe(6);
    expect(value(text, 'hearth_spec_drafted_tokens_total{model="svc/tiny-chat"}')).toBe(50);
    expect(value(text, 'hearth_spec_accepted_tokens_total{model="svc/tiny-chat"}')).toBe(40);
    expect(value(text, 'hearth_engine_heap_bytes')).toBe(40e6);
    expect(value(text, 'hearth_engine_external_bytes')).toBe(30e6);
    expect(text).toContain('hearth_http_request_duration_seconds_bucket');
  });

  it('with a metrics key, answers only that bearer token', async () => {
    const { fetch } = withMetrics('s3cret-metrics');
    expect((await fetch('/metrics')).status).toBe(401);
    expect((await fetch('/metrics', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const ok = await fetch('/metrics', { headers: { authorization: 'Bearer s3cret-metrics' } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('hearth_http_requests_total');
  });
});
