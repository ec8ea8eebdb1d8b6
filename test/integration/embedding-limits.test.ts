// Large embeddings requests against the real server with the openai SDK (issue 31): past the
// input or token limit a 400 naming `input` comes at once, and a request within them runs in
// micro-batches whose vectors come back in input order, equal to each input embedded alone.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Rng } from '../../models/rng.js';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const MAX_TOKENS = 20_000;
let server: TestServer;
let client: OpenAI;

beforeAll(async () => {
  await fixtures();
  const dataDir = await mkdtemp(join(tmpdir(), 'hearth-embed-limits-'));
  const key = await createKey(dataDir);
  server = await startServer(['--max-embedding-tokens', String(MAX_TOKENS)], dataDir);
  await waitReady(server.url);
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 });
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

const words = ['sea', 'stone', 'river', 'light', 'garden', 'winter', 'market', 'window'];

/** Refused with a 400 naming input, and how long the answer took. */
async function refused(input: string[]): Promise<{ ms: number; error: InstanceType<typeof OpenAI.BadRequestError> }> {
  const t0 = performance.now();
  const error = await client.embeddings.create({ model: 'svc/tiny-embed', input }).then(
    () => undefined,
    (e: unknown) => e,
  );
  const ms = performance.now() - t0;
  expect(error).toBeInstanceOf(OpenAI.BadRequestError);
  const e = error as InstanceType<typeof OpenAI.BadRequestError>;
  expect(e.status).toBe(400);
  expect(e.type).toBe('invalid_request_error');
  expect(e.param).toBe('input');
  return { ms, error: e };
}

describe('embeddings limits on the real server', () => {
  it('answers 2,049 inputs, and 10,000, with a 400 naming input at once', async () => {
    for (const count of [2049, 10_000]) {
      const { ms, error } = await refused(Array.from({ length: count }, (_, i) => `item ${i}`));
      expect(error.message).toContain(String(count));
      // Nothing of it ran: the answer takes no longer than parsing the body.
      expect(ms).toBeLessThan(3000);
    }
  });

  it('answers inputs whose tokens pass --max-embedding-tokens with a 400 naming input', async () => {
    const long = words.join(' ').repeat(4);
    const one = await client.embeddings.create({ model: 'svc/tiny-embed', input: long });
    const count = Math.floor(MAX_TOKENS / one.usage.prompt_tokens) + 1;
    const { error } = await refused(Array.from({ length: count }, () => long));
    expect(error.message).toMatch(new RegExp(`${count * one.usage.prompt_tokens} tokens.*${MAX_TOKENS}`));
  });

  it('embeds 300 inputs of mixed length in input order, each equal to the input embedded alone', async () => {
    const rng = new Rng(5);
    const input = Array.from({ length: 300 }, (_, i) => `${i}: ` + Array.from({ length: 1 + rng.int(40) }, () => words[rng.int(words.length)]).join(' '));
    const all = await client.embeddings.create({ model: 'svc/tiny-embed', input, encoding_format: 'float' });
    expect(all.data.map((d) => d.index)).toEqual(input.map((_, i) => i));
    for (const i of [0, 1, 7, 42, 99, 150, 233, 299]) {
      const alone = (await client.embeddings.create({ model: 'svc/tiny-embed', input: input[i]!, encoding_format: 'float' })).data[0]!.embedding;
      expect(all.data[i]!.embedding).toHaveLength(alone.length);
      all.data[i]!.embedding.forEach((x, d) => expect(x).toBeCloseTo(alone[d]!, 5));
    }
  });
});
