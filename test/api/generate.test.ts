import { describe, expect, test } from 'vitest';
import { parseEvents, setup } from './harness.js';

describe('POST /generate with the stub engine', () => {
  test('answers one text with meta_info for a single prompt, using the first chat model by default', async () => {
    const { post, engine } = setup();
    const res = await post('/generate', { text: 'The sky is', sampling_params: { max_new_tokens: 16 } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(engine.calls[0]!.model).toBe('svc/tiny-chat');
    expect(engine.calls[0]!.prompt).toEqual({ text: 'The sky is' });
    expect(body.text).toEqual(['Hello world!']);
    expect(body.meta_info).toMatchObject({
      model: 'svc/tiny-chat',
      prompt_tokens: 3,
      completion_tokens: 3,
      cached_tokens: 0,
      finish_reason: { type: 'stop', matched: null },
    });
    expect(typeof body.meta_info.id).toBe('string');
    expect(body.meta_info.e2e_latency).toBeGreaterThanOrEqual(0);
    expect(body.meta_info.items).toBeUndefined();
  });

  test('uses SGLang\'s defaults: temperature 1.0, max_new_tokens 128, top_k off', async () => {
    const { post, engine } = setup();
    await post('/generate', { text: 'x' });
    expect(engine.calls[0]!.sampling).toMatchObject({ temperature: 1, max_tokens: 128, top_k: -1, top_p: 1, min_p: 0, ignore_eos: false, logprobs: -1 });
  });

  test('passes sampling_params through to the stub engine', async () => {
    const { post, engine } = setup();
    await post('/generate', {
      input_ids: [5, 6, 7],
      model: 'svc/tiny-chat',
      sampling_params: { temperature: 0.3, top_p: 0.9, top_k: 20, min_p: 0.05, stop: ['\n'], stop_token_ids: [2], seed: 3, ignore_eos: true, max_new_tokens: 4 },
    });
    expect(engine.calls[0]!.prompt).toEqual({ tokens: [5, 6, 7] });
    expect(engine.calls[0]!.sampling).toMatchObject({ temperature: 0.3, top_p: 0.9, top_k: 20, min_p: 0.05, stop: ['\n'], stop_token_ids: [2], seed: 3, ignore_eos: true, max_tokens: 4 });
  });

  test('reports a matched stop string and a length finish in SGLang\'s shape', async () => {
    const { post } = setup();
    const stopped = await (await post('/generate', { text: 'x', sampling_params: { stop: '!' } })).json();
    expect(stopped.meta_info.finish_reason).toEqual({ type: 'stop', matched: '!' });
    expect(stopped.text).toEqual(['Hello world']);
    const cut = await (await post('/generate', { text: 'x', sampling_params: { max_new_tokens: 1 } })).json();
    expect(cut.meta_info.finish_reason).toEqual({ type: 'length', length: 1 });
  });

  test('answers a batch with one text per prompt × n, totals in meta_info and per-output items', async () => {
    const { post } = setup();
    const body = await (await post('/generate', { text: ['a', 'b c'], sampling_params: { n: 2 } })).json();
    expect(body.text).toEqual(['Hello world!', 'Hello world!', 'Hello world!', 'Hello world!']);
    expect(body.meta_info).toMatchObject({ prompt_tokens: 3, completion_tokens: 12 });
    expect(body.meta_info.items).toHaveLength(4);
    expect(body.meta_info.items.map((i: { prompt_tokens: number }) => i.prompt_tokens)).toEqual([1, 1, 2, 2]);
    expect(body.meta_info.items[0]).toMatchObject({ completion_tokens: 3, finish_reason: { type: 'stop', matched: null } });
  });

  test('returns output_token_logprobs as [logprob, token_id, text] and top logprobs when asked', async () => {
    const { post, engine } = setup();
    const body = await (await post('/generate', { text: 'x', return_logprob: true, top_logprobs_num: 2 })).json();
    expect(engine.calls[0]!.sampling.logprobs).toBe(2);
    expect(body.meta_info.output_token_logprobs).toEqual([
      [-0.1, 100, 'Hello'],
      [-0.1, 101, ' world'],
      [-0.1, 102, '!'],
    ]);
    expect(body.meta_info.output_top_logprobs[0]).toEqual([
      [-0.1, 100, 'Hello'],
      [-3, 1001, 'alt1'],
    ]);
  });

  test('streams cumulative objects with text arrays, then the final object, then [DONE]', async () => {
    const { post } = setup();
    const res = await post('/generate', { text: 'x', stream: true });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = parseEvents(await res.text());
    expect(events.at(-1)).toBe('[DONE]');
    const objs = events.slice(0, -1) as { text: string[]; meta_info: { finish_reason: unknown; completion_tokens: number } }[];
    expect(objs.map((o) => o.text)).toEqual([['Hello'], ['Hello world'], ['Hello world!'], ['Hello world!']]);
    expect(objs[0]!.meta_info.finish_reason).toBeNull();
    expect(objs.at(-1)!.meta_info).toMatchObject({ completion_tokens: 3, finish_reason: { type: 'stop', matched: null } });
  });

  test('refuses a body with neither text nor input_ids, and one with both', async () => {
    const { post } = setup();
    const none = await (await post('/generate', { sampling_params: {} })).json();
    expect(none.error).toMatchObject({ code: 'missing_required_parameter', param: 'text' });
    const both = await (await post('/generate', { text: 'a', input_ids: [1] })).json();
    expect(both.error).toMatchObject({ code: 'invalid_value', param: 'input_ids' });
  });

  test('needs a key like the /v1 routes', async () => {
    const { fetch } = setup();
    const res = await fetch('/generate', { method: 'POST', body: JSON.stringify({ text: 'x' }) });
    expect(res.status).toBe(401);
  });
});
