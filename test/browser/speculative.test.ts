// Speculative decoding in the front doors, on by default: the designed copying fixture asked to
// repeat its passage, through /generate, in the tab (WASM, fetched from a hub mirror, answered
// through MSW) and in Node through hearth/msw's handlers. Both give the passage, and both report
// in meta_info that most of it came from accepted drafts.
import { getResponse } from 'msw';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COPYING_PASSAGE } from '../../models/exports/copying.js';
import { hearthHandlers } from '../../src/front/msw/index.js';
import { exportFixtures } from '../helpers/exports.js';
import { CHROMIUM, freshBrowser, inPage, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
// A prompt that ends in a newline token, as a chat template's generation prompt does: the fixture's cue to recite.
const BODY = (model: string) => ({ model, text: `Repeat after me: ${COPYING_PASSAGE}\n`, sampling_params: { temperature: 0, max_new_tokens: 80 } });

let server: DemoServer;
let inNode: { text: string[]; meta_info: Record<string, unknown> };

beforeAll(async () => {
  const handlers = await hearthHandlers({ models: [join(await exportFixtures(), 'qwen3-copy-export')] });
  try {
    const res = await getResponse(handlers, new Request('https://hearth.test/generate', {
      method: 'POST',
      headers: { authorization: `Bearer svc_live_${'n0de'.repeat(8)}`, 'content-type': 'application/json' },
      body: JSON.stringify(BODY('svc/qwen3-copy-export')),
    }));
    inNode = (await res!.json()) as typeof inNode;
  } finally {
    await handlers.close();
  }
  if (CHROMIUM) server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
});

describe('speculative decoding through hearth/msw in Node', () => {
  it('recites the passage, most of it from accepted drafts', () => {
    expect(inNode.text).toEqual([COPYING_PASSAGE]);
    // Draft lengths follow the step cost measured as it runs: at least half the reply comes from drafts.
    expect(inNode.meta_info.spec_accepted_tokens).toBeGreaterThanOrEqual(26);
  });
});

suite('speculative decoding in the tab (wasm)', () => {
  const browser = freshBrowser();

  it('recites the passage, most of it from accepted drafts, as in Node', async () => {
    const hub = `${server.url}mirror`;
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=test-org/qwen3-copy-export&hubTask=chat&hub=${encodeURIComponent(hub)}`);
    const r = await inPage(page, 'post', info, '/generate', BODY('svc/hub-qwen3-copy-export'));
    expect(r.status).toBe(200);
    expect(r.body.text).toEqual([COPYING_PASSAGE]);
    expect(r.body.meta_info.spec_accepted_tokens).toBeGreaterThanOrEqual(26);
  }, 180_000);
});
