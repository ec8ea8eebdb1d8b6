// item_reference input items at the router (the stub engine, no model; the stub access
// layer keeps no responses): a malformed reference is a 400 naming its field, and an id
// no stored response of the caller's holds is OpenAI's 404 naming `input`, never a 500.
// Expanding real references is tested against each store (test/access/store-contract.ts)
// and end to end over `hearth serve` (test/integration/responses-stored.test.ts).
import { describe, expect, test } from 'vitest';
import { setup } from './harness.js';

const user = { role: 'user', content: 'Say hello' };
type Envelope = { error: { message: string; type: string; param: string | null; code: string | null } };

describe('item_reference input items', () => {
  test('a reference without a string id is a 400 naming the field', async () => {
    const { post } = setup();
    for (const [ref, code] of [
      [{ type: 'item_reference' }, 'missing_required_parameter'],
      [{ type: 'item_reference', id: 5 }, 'invalid_value'],
      [{ type: 'item_reference', id: '' }, 'invalid_value'],
    ] as const) {
      const res = await post('/v1/responses', { model: 'svc/tiny-chat', input: [user, ref] });
      expect(res.status).toBe(400);
      expect(((await res.json()) as Envelope).error).toMatchObject({ type: 'invalid_request_error', param: 'input[1].id', code });
    }
  });

  test("any other bad item is named with its path, not as the whole input (the union of a string or items hid it)", async () => {
    const { post } = setup();
    const cases = [
      [[{ type: 'input_image', image_url: 'x' }], 'input[0].type', /type 'input_image' are not supported/],
      [[user, { role: 'user', content: [{ type: 'input_image' }] }], 'input[1].content[0].image_url', /needs a string 'image_url'/],
      [[user, { role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }], 'input[1].content[0].type', /Content parts of type 'input_file'/],
      [[user, { role: 'user', content: [{ type: 'input_text', text: 'see' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' }] }], 'input[1].content[1]', /'svc\/tiny-chat' takes no images/],
      [[{ type: 'function_call', name: 'f', arguments: '{}' }], 'input[0].call_id', /call_id/],
    ] as const;
    for (const [input, param, message] of cases) {
      const res = await post('/v1/responses', { model: 'svc/tiny-chat', input });
      expect(res.status).toBe(400);
      const { error } = (await res.json()) as Envelope;
      expect(error.param).toBe(param);
      expect(error.message).toMatch(message);
    }
  });

  test("an id not stored is OpenAI's 404 naming `input`, typed or not, streamed or not, and nothing is charged", async () => {
    const { post, access } = setup();
    for (const ref of [{ type: 'item_reference', id: 'msg_unknown' }, { id: 'msg_unknown' }]) {
      for (const stream of [false, true]) {
        const res = await post('/v1/responses', { model: 'svc/tiny-chat', input: [user, ref], stream });
        expect(res.status).toBe(404);
        expect(((await res.json()) as Envelope).error).toMatchObject({ type: 'invalid_request_error', param: 'input', code: null, message: expect.stringContaining("Item with id 'msg_unknown' not found.") });
      }
    }
    expect(access.records).toEqual([]);
  });

  test('an object with neither a role nor an id is still a message missing its role', async () => {
    const { post } = setup();
    const res = await post('/v1/responses', { model: 'svc/tiny-chat', input: [{ content: 'Hi' }] });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Envelope).error.param).toBe('input[0].role');
  });
});
