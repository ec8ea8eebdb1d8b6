// The Vercel AI SDK and LangChain in a real headless Chromium tab (bundled by Vite as an
// application would), against the page's own Hearth: the same calls and the same schemas
// as the Node front doors (test/helpers/structured-clients.ts). Validity, never content.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Person, Weather } from '../helpers/client-schemas.js';
import { CHROMIUM, freshBrowser, inFrameworkPage, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
let server: DemoServer;

beforeAll(async () => {
  if (CHROMIUM) server = await startDemo({}, ['ai', '@ai-sdk/openai-compatible', '@langchain/openai', '@langchain/core/tools']);
}, 180_000);

afterAll(async () => {
  await server?.close();
});

suite('the Vercel AI SDK and LangChain in the page on ?device=wasm', () => {
  const browser = freshBrowser();

  it('get objects of the schema and tool calls with valid arguments', async () => {
    const { page, info, errors } = await openDemo(browser.context, `${server.url}?device=wasm`);
    const r = await inFrameworkPage(page, 'frameworkFlow', info);
    expect(r.generateObject.finish).toBe('stop');
    expect(Person.safeParse(r.generateObject.object).success).toBe(true);
    expect(r.streamObject.partials).toBeGreaterThan(1);
    expect(Person.safeParse(r.streamObject.object).success).toBe(true);
    expect(r.generateText.finish).toBe('tool-calls');
    expect(r.generateText.calls[0]?.name).toBe('get_weather');
    expect(Weather.safeParse(r.generateText.calls[0]!.input).success).toBe(true);
    expect(Person.safeParse(r.withStructuredOutput).success).toBe(true);
    expect(r.bindTools[0]?.name).toBe('get_weather');
    expect(Weather.safeParse(r.bindTools[0]!.args).success).toBe(true);
    expect(errors).toEqual([]);
  }, 240_000);
});
