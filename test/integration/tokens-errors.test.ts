// What /tokenize and /detokenize refuse, on a real `hearth serve` over raw fetch: each in the
// error envelope with the status the contract gives and `param` naming the field, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures } from '../helpers/fixtures.js';
import { createKey, startServer, waitReady, type TestServer } from '../helpers/server.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  await fixtures();
  server = await startServer(['--models', 'svc/tiny-chat,svc/tiny-embed']);
  key = await createKey(server.dataDir);
  await waitReady(server.url);
}, 120_000);

afterAll(async () => {
  expect(await server?.stop()).toBe(0);
});

async function refusal(p: string, body: unknown): Promise<{ status: number; error: { message: string; type: string; param: string | null; code: string | null } }> {
  const res = await fetch(`${server.url}${p}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const json = (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(json.error.message.length).toBeGreaterThan(0);
  return { status: res.status, error: json.error };
}

const hi = [{ role: 'user', content: 'hi' }];

describe('/tokenize refuses', () => {
  it.each([
    ['no model', { prompt: 'x' }, 'model', 'missing_required_parameter'],
    ['neither a prompt nor messages', { model: 'svc/tiny-chat' }, 'prompt', 'missing_required_parameter'],
    ['both a prompt and messages', { model: 'svc/tiny-chat', prompt: 'x', messages: hi }, 'messages', 'invalid_value'],
    ['a prompt that is not a string', { model: 'svc/tiny-chat', prompt: ['x'] }, 'prompt', 'invalid_value'],
    ['empty messages', { model: 'svc/tiny-chat', messages: [] }, 'messages', 'invalid_value'],
    ['a message with an unknown role', { model: 'svc/tiny-chat', messages: [{ role: 'robot', content: 'x' }] }, 'messages[0].role', 'invalid_value'],
    ['add_special_tokens that is not a boolean', { model: 'svc/tiny-chat', prompt: 'x', add_special_tokens: 'yes' }, 'add_special_tokens', 'invalid_value'],
    ['add_generation_prompt that is not a boolean', { model: 'svc/tiny-chat', messages: hi, add_generation_prompt: 1 }, 'add_generation_prompt', 'invalid_value'],
    ['continue_final_message, which it cannot do', { model: 'svc/tiny-chat', messages: hi, continue_final_message: true }, 'continue_final_message', 'invalid_value'],
    ['a chat_template of its own', { model: 'svc/tiny-chat', messages: hi, chat_template: '{{ messages }}' }, 'chat_template', 'invalid_value'],
    ['messages to a model with no chat template', { model: 'svc/tiny-embed', messages: hi }, 'messages', 'invalid_value'],
  ])('%s with 400 naming the field', async (_what, body, param, code) => {
    const { status, error } = await refusal('/tokenize', body);
    expect([status, error.type, error.param, error.code]).toEqual([400, 'invalid_request_error', param, code]);
  });

  it('an unknown model with 404 model_not_found', async () => {
    const { status, error } = await refusal('/tokenize', { model: 'svc/nope', prompt: 'x' });
    expect([status, error.param, error.code]).toEqual([404, 'model', 'model_not_found']);
  });

  it('a body that is not JSON with 400 invalid_json', async () => {
    const { status, error } = await refusal('/tokenize', '{"model": ');
    expect([status, error.code]).toEqual([400, 'invalid_json']);
  });
});

describe('/detokenize refuses', () => {
  it.each([
    ['no tokens', { model: 'svc/tiny-chat' }, 'tokens', 'missing_required_parameter'],
    ['tokens that are not an array', { model: 'svc/tiny-chat', tokens: '1 2' }, 'tokens', 'invalid_value'],
    ['a negative token id', { model: 'svc/tiny-chat', tokens: [1, -1] }, 'tokens[1]', 'invalid_value'],
    ['a token id that is not an integer', { model: 'svc/tiny-chat', tokens: [1.5] }, 'tokens[0]', 'invalid_value'],
    ['a token id past the vocabulary', { model: 'svc/tiny-chat', tokens: [72, 1_000_000] }, 'tokens', 'invalid_value'],
    ["a token id past an embedding model's vocabulary", { model: 'svc/tiny-embed', tokens: [512] }, 'tokens', 'invalid_value'],
  ])('%s with 400 naming the field', async (_what, body, param, code) => {
    const { status, error } = await refusal('/detokenize', body);
    expect([status, error.type, error.param, error.code]).toEqual([400, 'invalid_request_error', param, code]);
  });

  it('an unknown model with 404 model_not_found', async () => {
    const { status, error } = await refusal('/detokenize', { model: 'svc/nope', tokens: [1] });
    expect([status, error.param, error.code]).toEqual([404, 'model', 'model_not_found']);
  });
});
