// The Responses API in a real headless Chromium tab: the unmodified openai SDK's
// responses.create and responses.stream in the page, answered by the page's own Hearth
// through MSW's service worker, every body and event valid against OpenAI's OpenAPI
// document; the response is stored in the page's memory store, read back and continued.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openapiAvailable, validateAgainst } from '../helpers/openapi.js';
import { CHROMIUM, freshBrowser, inResponsesPage, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
let server: DemoServer;

beforeAll(async () => {
  if (CHROMIUM) server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

function expectValid(schema: string, body: unknown) {
  if (openapiAvailable) expect(validateAgainst(schema, body)).toEqual([]);
}

suite('the Responses API in the page on ?device=wasm', () => {
  const browser = freshBrowser();

  it('creates, streams, stores and continues responses through the openai SDK, in bodies that validate', async () => {
    const { page, info, errors } = await openDemo(browser.context, `${server.url}?device=wasm`);
    const r = await inResponsesPage(page, 'responsesFlow', info);

    expectValid('Response', r.created);
    expect(r.created.output_text).toBe(r.chatText);
    for (const e of r.events) expectValid('ResponseStreamEvent', e);
    expect(r.events.map((e) => e.sequence_number)).toEqual(r.events.map((_, i) => i));
    expect(r.events[0]!.type).toBe('response.created');
    expect(r.events.at(-1)!.type).toBe(`response.${r.created.status}`);
    expect(r.streamedText).toBe(r.created.output_text);
    // Deltas reach the page as they are made, not in one piece at the end.
    const deltas = r.events.flatMap((e, i) => (e.type === 'response.output_text.delta' ? [r.arrivals[i]!] : []));
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.at(-1)! - deltas[0]!).toBeGreaterThan(0);

    expectValid('Response', r.retrieved);
    expect(r.retrieved).toEqual(r.created);
    expect(r.items.data).toMatchObject([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Tell me about the sea.' }] }]);
    expectValid('ResponseItemList', { object: 'list', data: r.items.data, has_more: r.items.has_more, first_id: r.items.data[0]!.id, last_id: r.items.data.at(-1)!.id });

    expectValid('Response', r.next);
    expect(r.next.previous_response_id).toBe(r.created.id);
    expect(r.next.output_text).toBe(r.wholeText);
    expect(r.next.usage!.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(errors).toEqual([]);
  }, 240_000);
});
