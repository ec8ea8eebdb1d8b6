// Stored responses outlive the server on the file and redis stores: after a restart a
// response reads back as it was, its input items list, and a conversation continues from it.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { REDIS_MISSING, redisServerBinary, startRedis, type TestRedis } from '../helpers/redis.js';
import { createKey, startServer, waitReady } from '../helpers/server.js';

const haveRedis = redisServerBinary() !== null;
if (!haveRedis) console.warn(REDIS_MISSING);

let redis: TestRedis | undefined;
beforeAll(async () => {
  await fixtures();
  if (haveRedis) redis = await startRedis();
}, 60_000);
afterAll(async () => {
  await redis?.stop();
});

const greedy = { model: 'svc/tiny-chat', temperature: 0, max_output_tokens: 16 } as const;

async function served(dataDir: string, store: string[], key: string) {
  const server = await startServer(store, dataDir);
  await waitReady(server.url);
  return { server, client: new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key, maxRetries: 0 }) };
}

for (const kind of ['file', 'redis'] as const) {
  describe.skipIf(kind === 'redis' && !haveRedis)(`stored responses on the ${kind} store`, () => {
    it('read back, list and continue after a restart', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), `hearth-responses-${kind}-`));
      const store = kind === 'redis' ? ['--store', `${redis!.url}`] : [];
      const key = await createKey(dataDir, store);

      const before = await served(dataDir, store, key);
      const first = await before.client.responses.create({ ...greedy, input: 'Tell me about the sea.' });
      const items = (await before.client.responses.inputItems.list(first.id)).data;
      expect(await before.server.stop()).toBe(0);

      const after = await served(dataDir, store, key);
      try {
        expect(await after.client.responses.retrieve(first.id)).toEqual(first);
        expect((await after.client.responses.inputItems.list(first.id)).data).toEqual(items);
        const next = await after.client.responses.create({ ...greedy, previous_response_id: first.id, input: 'And the sky?' });
        const whole = await after.client.responses.create({
          ...greedy,
          store: false,
          input: [
            { role: 'user', content: 'Tell me about the sea.' },
            { role: 'assistant', content: first.output_text },
            { role: 'user', content: 'And the sky?' },
          ],
        });
        expect(next.output_text).toBe(whole.output_text);
      } finally {
        expect(await after.server.stop()).toBe(0);
      }
    }, 180_000);
  });
}
