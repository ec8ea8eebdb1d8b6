// What /v1/rerank, /rerank, /v2/rerank and /v1/score refuse, on a real `hearth serve` over raw
// fetch: each in the error envelope with the status the contract gives and `param` naming the
// field (a chat or embedding model's 400 names its task), never a 500. --max-embedding-inputs
// lowers how many documents (or pairs) one request may have.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

const MAX_INPUTS = 4;
let server: TestServer;
let key: string;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', 'svc/tiny-chat,svc/tiny-embed,svc/tiny-rerank', '--max-embedding-inputs', String(MAX_INPUTS)]);
  key = await createKey(server.dataDir);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

interface ApiError {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

async function refusal(p: string, body: unknown): Promise<{ status: number; error: ApiError }> {
  const res = await fetch(`${server.url}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await res.json()) as { error: ApiError };
  expect(res.status, JSON.stringify(json)).toBeLessThan(500);
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(json.error.message.length).toBeGreaterThan(0);
  return { status: res.status, error: json.error };
}

const M = 'svc/tiny-rerank';
const five = ['a', 'b', 'c', 'd', 'e'];

describe.each(['/v1/rerank', '/rerank', '/v2/rerank'])('%s refuses', (p) => {
  it.each([
    ['a chat model, naming its task', { model: 'svc/tiny-chat', query: 'q', documents: ['a'] }, 'model', 'invalid_value', 'chat model'],
    ['an embedding model, naming its task', { model: 'svc/tiny-embed', query: 'q', documents: ['a'] }, 'model', 'invalid_value', 'embedding model'],
    ['no model', { query: 'q', documents: ['a'] }, 'model', 'missing_required_parameter', undefined],
    ['no query', { model: M, documents: ['a'] }, 'query', 'missing_required_parameter', undefined],
    ['a query that is not a string', { model: M, query: ['q'], documents: ['a'] }, 'query', 'invalid_value', undefined],
    ['no documents', { model: M, query: 'q' }, 'documents', 'missing_required_parameter', undefined],
    ['empty documents', { model: M, query: 'q', documents: [] }, 'documents', 'invalid_value', undefined],
    ['documents that are not an array', { model: M, query: 'q', documents: 'a' }, 'documents', 'invalid_value', undefined],
    ['a document that is neither a string nor {text}', { model: M, query: 'q', documents: ['a', { content: 'b' }] }, 'documents[1]', 'invalid_value', undefined],
    ['more documents than --max-embedding-inputs', { model: M, query: 'q', documents: five }, 'documents', 'invalid_value', `${five.length} items`],
    ['a top_n of 0', { model: M, query: 'q', documents: ['a'], top_n: 0 }, 'top_n', 'invalid_value', undefined],
    ['a top_n that is not an integer', { model: M, query: 'q', documents: ['a'], top_n: 1.5 }, 'top_n', 'invalid_value', undefined],
    ['return_documents that is not a boolean', { model: M, query: 'q', documents: ['a'], return_documents: 'no' }, 'return_documents', 'invalid_value', undefined],
  ])('%s with 400 naming the field', async (_what, body, param, code, says) => {
    const { status, error } = await refusal(p, body);
    expect([status, error.type, error.param, error.code]).toEqual([400, 'invalid_request_error', param, code]);
    if (says) expect(error.message).toContain(says);
  });

  it('an unknown model with 404 model_not_found', async () => {
    const { status, error } = await refusal(p, { model: 'svc/nope', query: 'q', documents: ['a'] });
    expect([status, error.param, error.code]).toEqual([404, 'model', 'model_not_found']);
  });

  it('a body that is not JSON with 400 invalid_json', async () => {
    const { status, error } = await refusal(p, '{"model": ');
    expect([status, error.code]).toEqual([400, 'invalid_json']);
  });
});

describe('/v1/score refuses', () => {
  it.each([
    ['a chat model, naming its task', { model: 'svc/tiny-chat', text_1: 'a', text_2: 'b' }, 'model', 'invalid_value', 'chat model'],
    ['an embedding model, naming its task', { model: 'svc/tiny-embed', text_1: 'a', text_2: 'b' }, 'model', 'invalid_value', 'embedding model'],
    ['no text_1', { model: M, text_2: 'b' }, 'text_1', 'missing_required_parameter', undefined],
    ['no text_2', { model: M, text_1: 'a' }, 'text_2', 'missing_required_parameter', undefined],
    ['an empty text_2', { model: M, text_1: 'a', text_2: [] }, 'text_2', 'invalid_value', undefined],
    ['a text_1 that is not text', { model: M, text_1: 3, text_2: 'b' }, 'text_1', 'invalid_value', undefined],
    ['texts that do not pair (2 to 3)', { model: M, text_1: ['a', 'b'], text_2: ['a', 'b', 'c'] }, 'text_2', 'invalid_value', 'pairs are 1 to 1, 1 to N or N to N'],
    ['more pairs than --max-embedding-inputs (1 to N)', { model: M, text_1: 'q', text_2: five }, 'text_2', 'invalid_value', `${five.length} items`],
    ['more pairs than --max-embedding-inputs (N to N)', { model: M, text_1: five, text_2: five }, 'text_2', 'invalid_value', `${five.length} items`],
  ])('%s with 400 naming the field', async (_what, body, param, code, says) => {
    const { status, error } = await refusal('/v1/score', body);
    expect([status, error.type, error.param, error.code]).toEqual([400, 'invalid_request_error', param, code]);
    if (says) expect(error.message).toContain(says);
  });

  it('an unknown model with 404 model_not_found', async () => {
    const { status, error } = await refusal('/v1/score', { model: 'svc/nope', text_1: 'a', text_2: 'b' });
    expect([status, error.param, error.code]).toEqual([404, 'model', 'model_not_found']);
  });
});

describe('the limit', () => {
  it('answers as many documents as --max-embedding-inputs allows', async () => {
    const res = await fetch(`${server.url}/v1/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: M, query: 'q', documents: five.slice(0, MAX_INPUTS) }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: unknown[] }).results).toHaveLength(MAX_INPUTS);
  });
});
