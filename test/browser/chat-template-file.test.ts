// A checkpoint that keeps its chat template in chat_template.jinja (as recent
// transformers versions write it), served in the page: the test mirror answers for a
// hub repo with tiny-chat whose template was moved out of tokenizer_config.json into
// that file, and the page renders and answers as it does for tiny-chat itself.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../demo/config.js';
import { fixtures } from '../helpers/fixtures.js';
import { CHROMIUM, freshBrowser, inPage, mirrorFolders, mirrorHits, openDemo, startDemo, type DemoServer } from './harness.js';

const suite = CHROMIUM ? describe : describe.skip;
const REPO = 'tiny-chat-jinja';

let server: DemoServer;
let folder: string;

beforeAll(async () => {
  if (!CHROMIUM) return;
  await fixtures();
  const tinyChat = join(REPO_ROOT, 'models/fixtures/tiny-chat');
  folder = mkdtempSync(join(tmpdir(), 'hearth-jinja-page-'));
  cpSync(tinyChat, folder, { recursive: true });
  const config = JSON.parse(readFileSync(join(tinyChat, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(folder, 'chat_template.jinja'), String(config.chat_template));
  delete config.chat_template;
  writeFileSync(join(folder, 'tokenizer_config.json'), JSON.stringify(config));
  mirrorFolders.set(REPO, folder);
  server = await startDemo();
}, 180_000);

afterAll(async () => {
  await server?.close();
  mirrorFolders.clear();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

suite('a chat template in chat_template.jinja, in the page', () => {
  const browser = freshBrowser();

  it('is fetched with the tokenizer and serves chat as the same checkpoint with its template in tokenizer_config.json', async () => {
    const hub = `${server.url}mirror`;
    const { page, info } = await openDemo(browser.context, `${server.url}?device=wasm&hubModel=org/${REPO}&hubTask=chat&hub=${encodeURIComponent(hub)}`);
    const messages = [{ role: 'user', content: 'Hello!' }];
    const moved = await inPage(page, 'post', info, '/v1/chat/completions', { model: `svc/hub-${REPO}`, messages, temperature: 0 });
    const kept = await inPage(page, 'post', info, '/v1/chat/completions', { model: 'svc/tiny-chat', messages, temperature: 0 });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(mirrorHits).toContain(`/mirror/org/${REPO}/resolve/main/chat_template.jinja`);
    expect(moved.body.usage.prompt_tokens).toBe(kept.body.usage.prompt_tokens);
    expect(moved.body.choices[0].message.content).toBe(kept.body.choices[0].message.content);
  }, 240_000);
});
