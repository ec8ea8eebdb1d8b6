import { describe, expect, test } from 'vitest';
import { validateAgainst } from '../helpers/openapi.js';
import { setup } from './harness.js';
import { EMBED_DIMS } from './stub-engine.js';

const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

function decode(b64: string): number[] {
  const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  return Array.from({ length: bytes.length / 4 }, (_, i) => view.getFloat32(i * 4, true));
}

describe('POST /v1/embeddings with the stub engine', () => {
  test('returns float vectors of the stub engine\'s width by default', async () => {
    const { post, access } = setup();
    const res = await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'hello there' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ object: 'list', model: 'svc/tiny-embed', usage: { prompt_tokens: 2, total_tokens: 2 } });
    expect(body.data).toHaveLength(1);
    expect(body.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    expect(body.data[0].embedding).toHaveLength(EMBED_DIMS);
    expect(norm(body.data[0].embedding)).toBeCloseTo(1, 5);
    expect(validateAgainst('CreateEmbeddingResponse', body)).toEqual([]);
    expect(access.records[0]!.usage).toMatchObject({ model: 'svc/tiny-embed', prompt_tokens: 2, completion_tokens: 0 });
    expect(access.records[0]!.usage.cost_usd).toBeCloseTo((2 * 0.1) / 1e6, 15);
  });

  test('returns one entry per input in order for string arrays and token arrays', async () => {
    const { post, engine } = setup();
    const body = await (await post('/v1/embeddings', { model: 'svc/tiny-embed', input: ['a', 'b', 'c'] })).json();
    expect(body.data.map((d: { index: number }) => d.index)).toEqual([0, 1, 2]);
    await post('/v1/embeddings', { model: 'svc/tiny-embed', input: [1, 2, 3] });
    await post('/v1/embeddings', { model: 'svc/tiny-embed', input: [[1, 2], [3]] });
    expect(engine.embedCalls.map((c) => c.input)).toEqual([['a', 'b', 'c'], [[1, 2, 3]], [[1, 2], [3]]]);
  });

  test('encodes base64 as little-endian float32 equal to the float answer', async () => {
    const { post } = setup();
    const floats = await (await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x', encoding_format: 'float' })).json();
    const b64 = await (await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x', encoding_format: 'base64' })).json();
    expect(typeof b64.data[0].embedding).toBe('string');
    const decoded = decode(b64.data[0].embedding);
    expect(decoded).toHaveLength(EMBED_DIMS);
    decoded.forEach((x, i) => expect(x).toBe(Math.fround(floats.data[0].embedding[i])));
  });

  test('truncates to dimensions and normalises again', async () => {
    const { post } = setup();
    const full = (await (await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x' })).json()).data[0].embedding as number[];
    const short = (await (await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x', dimensions: 8 })).json()).data[0].embedding as number[];
    expect(short).toHaveLength(8);
    expect(norm(short)).toBeCloseTo(1, 5);
    const n8 = norm(full.slice(0, 8));
    short.forEach((x, i) => expect(x).toBeCloseTo(full[i]! / n8, 5));
  });

  test('refuses dimensions above the model\'s width or below 1 with a 400 naming dimensions', async () => {
    const { post } = setup();
    for (const dimensions of [EMBED_DIMS + 1, 0]) {
      const res = await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x', dimensions });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatchObject({ code: 'invalid_value', param: 'dimensions' });
    }
  });

  test('refuses an unknown encoding_format, an empty input array and a missing input', async () => {
    const { post } = setup();
    const fmt = await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'x', encoding_format: 'hex' });
    expect((await fmt.json()).error).toMatchObject({ param: 'encoding_format', code: 'invalid_value' });
    const empty = await post('/v1/embeddings', { model: 'svc/tiny-embed', input: [] });
    expect((await empty.json()).error).toMatchObject({ param: 'input', code: 'invalid_value' });
    const missing = await post('/v1/embeddings', { model: 'svc/tiny-embed' });
    expect((await missing.json()).error).toMatchObject({ param: 'input', code: 'missing_required_parameter' });
  });
});
