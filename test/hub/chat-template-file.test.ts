// chat_template.jinja in hub downloads, against a local mirror: fetched beside the
// tokenizer files when the repo has it (transformers.js's file list leaves it out), a
// repo without one downloads as before, and a folder downloaded once starts again with
// no hub reachable. Adding such a repo makes a chat model.
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../src/backends/node.js';
import { downloadModel } from '../../src/engine/hub/node.js';
import { validateCheckpoint } from '../../src/engine/models/files.js';
import { entryFromHub } from '../../src/ops/checkpoints.js';
import { fixtures } from '../helpers/fixtures.js';
import { freePort } from '../helpers/ports.js';
import { startMirror, type Mirror } from './mirror.js';

let repos: string;
let mirror: Mirror;
const dirs: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');

beforeAll(async () => {
  const tinyChat = join(await fixtures(), 'tiny-chat');
  repos = temp('hearth-jinja-repos-');
  // tiny-chat as a newer export writes it: the template in chat_template.jinja, none in tokenizer_config.json.
  const moved = join(repos, 'tiny-chat-jinja');
  cpSync(tinyChat, moved, { recursive: true });
  const config = JSON.parse(readFileSync(join(tinyChat, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  writeFileSync(join(moved, 'chat_template.jinja'), String(config.chat_template));
  delete config.chat_template;
  writeFileSync(join(moved, 'tokenizer_config.json'), JSON.stringify(config));
  cpSync(tinyChat, join(repos, 'tiny-chat'), { recursive: true });
  mirror = await startMirror(repos);
});
afterAll(async () => {
  await mirror?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('chat_template.jinja in hub downloads', () => {
  it('is downloaded beside the tokenizer files when the repo has it, and the folder is a chat checkpoint', async () => {
    const cacheDir = temp('hearth-hub-');
    const folder = await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/tiny-chat-jinja', task: 'chat' });
    expect(mirror.log).toContainEqual({ method: 'GET', path: '/test-org/tiny-chat-jinja/resolve/main/chat_template.jinja' });
    expect(sha(join(folder, 'chat_template.jinja'))).toBe(sha(join(repos, 'tiny-chat-jinja', 'chat_template.jinja')));
    expect(await validateCheckpoint(nodeBackend('cpu'), folder)).toMatchObject({ model_type: 'llama', task: 'chat' });
  });

  it('is not needed: a repo without one downloads, and its folder starts again with no hub reachable', async () => {
    const cacheDir = temp('hearth-hub-');
    const folder = await downloadModel({ cacheDir, endpoint: mirror.url }, { repo: 'test-org/tiny-chat', task: 'chat' });
    expect(existsSync(join(folder, 'chat_template.jinja'))).toBe(false);
    expect(existsSync(join(folder, 'onnx', 'model.onnx'))).toBe(true);
    // Nothing listens there: the hub cannot be asked whether the repo has the file now.
    const gone = `http://127.0.0.1:${await freePort()}`;
    await expect(downloadModel({ cacheDir, endpoint: gone }, { repo: 'test-org/tiny-chat', task: 'chat' })).resolves.toBe(folder);
  });

  it('makes a repo whose tokenizer_config.json has no template a chat model when it is added', async () => {
    const before = process.env.HF_ENDPOINT;
    process.env.HF_ENDPOINT = mirror.url;
    try {
      const entry = await entryFromHub({ id: 'svc/jinja' }, 'test-org/tiny-chat-jinja', temp('hearth-hub-'));
      expect(entry).toMatchObject({ id: 'svc/jinja', task: 'chat', source: 'test-org/tiny-chat-jinja' });
    } finally {
      if (before === undefined) delete process.env.HF_ENDPOINT;
      else process.env.HF_ENDPOINT = before;
    }
  });
});
