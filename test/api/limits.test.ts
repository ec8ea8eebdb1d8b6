// What one request may ask for (src/api/limits.ts): embedding inputs and their tokens, and
// generations (prompts × n), each refused with a 400 naming the field before anything runs.
import { describe, expect, test } from 'vitest';
import { setup } from './harness.js';

const strings = (count: number) => Array.from({ length: count }, (_, i) => `input ${i}`);

async function refusal(res: Response) {
  expect(res.status).toBe(400);
  return ((await res.json()) as { error: { type: string; param: string; message: string } }).error;
}

describe('request limits on /v1/embeddings', () => {
  test('2,049 inputs (one past OpenAI\'s limit) get a 400 naming input, and the engine never sees them', async () => {
    const { post, engine } = setup();
    const error = await refusal(await post('/v1/embeddings', { model: 'svc/tiny-embed', input: strings(2049) }));
    expect(error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
    expect(error.message).toMatch(/2049.*2048/);
    expect(engine.embedCalls).toHaveLength(0);
  });

  test('2,048 inputs are served, and the engine is told the token limit of 300,000', async () => {
    const { post, engine } = setup();
    const res = await post('/v1/embeddings', { model: 'svc/tiny-embed', input: strings(2048), encoding_format: 'base64' });
    expect(res.status).toBe(200);
    expect((await res.json()).data).toHaveLength(2048);
    expect(engine.embedCalls[0]).toMatchObject({ max_total_tokens: 300_000 });
  });

  test('takes limits of its own from the router options, token arrays counted as inputs too', async () => {
    const { post, engine } = setup({ maxEmbeddingInputs: 3, maxEmbeddingTokens: 40 });
    expect((await refusal(await post('/v1/embeddings', { model: 'svc/tiny-embed', input: [[1], [2], [3], [4]] }))).param).toBe('input');
    expect((await post('/v1/embeddings', { model: 'svc/tiny-embed', input: strings(3) })).status).toBe(200);
    expect(engine.embedCalls.map((c) => c.max_total_tokens)).toEqual([40]);
  });
});

describe('request limits on generations (prompts × n)', () => {
  test('/generate with 129 prompts gets a 400 naming text, or input_ids for token prompts', async () => {
    const { post, engine } = setup();
    expect((await refusal(await post('/generate', { text: strings(129) }))).param).toBe('text');
    expect((await refusal(await post('/generate', { input_ids: Array.from({ length: 129 }, () => [5, 6]) }))).param).toBe('input_ids');
    expect(engine.calls).toHaveLength(0);
  });

  test('/generate with 17 prompts × n = 8 (136 generations) gets a 400 naming sampling_params.n; 16 × 8 is served', async () => {
    const { post, engine } = setup();
    const error = await refusal(await post('/generate', { text: strings(17), sampling_params: { n: 8, max_new_tokens: 2 } }));
    expect(error.param).toBe('sampling_params.n');
    expect(error.message).toMatch(/136/);
    expect(engine.calls).toHaveLength(0);
    const res = await post('/generate', { text: strings(16), sampling_params: { n: 8, max_new_tokens: 2 } });
    expect(res.status).toBe(200);
    expect((await res.json()).text).toHaveLength(128);
  });

  test('/v1/completions names prompt or n, and chat names n, under a lower limit', async () => {
    const { post, engine } = setup({ maxGenerations: 4 });
    expect((await refusal(await post('/v1/completions', { model: 'svc/tiny-chat', prompt: strings(5) }))).param).toBe('prompt');
    expect((await refusal(await post('/v1/completions', { model: 'svc/tiny-chat', prompt: strings(2), n: 3 }))).param).toBe('n');
    expect((await refusal(await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'hi' }], n: 5 }))).param).toBe('n');
    expect(engine.calls).toHaveLength(0);
    expect((await post('/v1/completions', { model: 'svc/tiny-chat', prompt: strings(2), n: 2 })).status).toBe(200);
  });
});
