// Logprobs are always finite numbers: a token a grammar masks out has no chance at all, which is
// -Infinity, and JSON has no -Infinity (it went out as null). Such tokens among the top
// alternatives are reported with OpenAI's floor, -9999, streamed or not, on every endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', 'svc/tiny-chat']);
  key = await createKey(server.dataDir);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  await server?.stop();
});

async function post(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text.slice(0, 300)).toBe(200);
  return text;
}

/** The JSON documents of an answer: one, or one per SSE event. */
function documents(text: string): unknown[] {
  if (!text.startsWith('data: ')) return [JSON.parse(text)];
  return text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)));
}

type ChatLogprob = { logprob: unknown; top_logprobs: { logprob: unknown }[] };

/** Chat's logprobs.content[].logprob and their top_logprobs[].logprob. */
function chatLogprobs(text: string): unknown[] {
  return documents(text).flatMap((d) =>
    (d as { choices: { logprobs: { content: ChatLogprob[] } | null }[] }).choices.flatMap((c) =>
      (c.logprobs?.content ?? []).flatMap((t) => [t.logprob, ...t.top_logprobs.map((x) => x.logprob)]),
    ),
  );
}

/** /generate's output_token_logprobs [[logprob, id, text]] and output_top_logprobs [[[logprob, id, text]]]. */
function generateLogprobs(text: string): unknown[] {
  return documents(text).flatMap((d) => {
    const m = (d as { meta_info: { output_token_logprobs?: unknown[][]; output_top_logprobs?: unknown[][][] } }).meta_info;
    return [...(m.output_token_logprobs ?? []).map((t) => t[0]), ...(m.output_top_logprobs ?? []).flat().map((t) => t[0])];
  });
}

const schema = { type: 'object', properties: { a: { type: 'integer' }, b: { type: 'string', maxLength: 5 } }, required: ['a', 'b'] };

describe('logprobs', () => {
  it('are finite numbers in chat with a grammar, top_logprobs and a negative frequency_penalty, streamed or not', async () => {
    for (const stream of [false, true]) {
      const text = await post('/v1/chat/completions', {
        model: 'svc/tiny-chat',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 12,
        stream,
        logprobs: true,
        top_logprobs: 20,
        frequency_penalty: -1.5,
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema } },
      });
      const values = chatLogprobs(text);
      expect(values.length).toBeGreaterThan(20);
      for (const v of values) expect(typeof v === 'number' && Number.isFinite(v), `${stream ? 'stream' : 'json'}: ${String(v)}`).toBe(true);
    }
  });

  it('are finite numbers in /generate with a regex and top_logprobs_num', async () => {
    for (const stream of [false, true]) {
      const text = await post('/generate', {
        text: 'The code is',
        sampling_params: { max_new_tokens: 8, temperature: 0, regex: '[A-Z]{3}-[0-9]{3}' },
        return_logprob: true,
        top_logprobs_num: 20,
        stream,
      });
      const values = generateLogprobs(text);
      expect(values.length).toBeGreaterThan(20);
      for (const v of values) expect(typeof v === 'number' && Number.isFinite(v), String(v)).toBe(true);
    }
  });
});
