// Checkpoints that keep their chat template in chat_template.jinja beside
// tokenizer_config.json, as recent transformers versions write them: the Node engine
// renders the file's template as transformers.js does (its processors pass the file's
// template over the tokenizer's), and calls such a folder a chat model.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AutoTokenizer } from '@huggingface/transformers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeBackend } from '../../../src/backends/node.js';
import { createEngine } from '../../../src/engine/engine.js';
import { validateCheckpoint } from '../../../src/engine/models/files.js';
import type { CatalogEntry, ChatMessage, EngineApi, SamplingParams } from '../../../src/engine/protocol.js';
import { modelsSettled } from '../../../src/runtime.js';
import { exportFixtures } from '../../helpers/exports.js';

const greedy: SamplingParams = {
  max_tokens: 12, temperature: 0, top_p: 1, top_k: -1, min_p: 0, presence_penalty: 0, frequency_penalty: 0,
  stop: [], stop_token_ids: [], ignore_eos: false, logprobs: -1,
};
const HELLO: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hello there' }];
/** Only the file's template writes it: proof of which template rendered the prompt. */
const MARK = 'FROM-THE-JINJA-FILE';

let original: string;
let template: string;
const folders: string[] = [];
let engine: EngineApi;
let n = 0;

/** qwen3-export with its tokenizer_config.json's template moved into chat_template.jinja (`keep`: left in the config too). */
function jinjaFolder(jinja: string, keep = false): string {
  const folder = mkdtempSync(join(tmpdir(), 'hearth-jinja-'));
  folders.push(folder);
  cpSync(original, folder, { recursive: true });
  const config = JSON.parse(readFileSync(join(original, 'tokenizer_config.json'), 'utf8')) as Record<string, unknown>;
  if (!keep) delete config.chat_template;
  writeFileSync(join(folder, 'tokenizer_config.json'), JSON.stringify(config, null, 2));
  writeFileSync(join(folder, 'chat_template.jinja'), jinja);
  return folder;
}

const entry = (id: string, source: string): CatalogEntry => ({
  id, task: 'chat', class: 't', context_length: 4096, source, price: { input_per_1m: 0, output_per_1m: 0 },
});
const run = (model: string) => engine.generate({ id: `j${n++}`, model, prompt: { messages: HELLO }, sampling: greedy }, () => undefined);

/** transformers.js's prompt ids for a folder's tokenizer with the template of its chat_template.jinja, as its processors apply it. */
async function referenceIds(folder: string): Promise<number[]> {
  const tokenizer = await AutoTokenizer.from_pretrained(folder, { local_files_only: true });
  const chat_template = readFileSync(join(folder, 'chat_template.jinja'), 'utf8');
  const ids = tokenizer.apply_chat_template(HELLO as never, { chat_template, add_generation_prompt: true, return_dict: false, return_tensor: false });
  return (ids as number[]).map(Number);
}

let only: string;
let both: string;

beforeAll(async () => {
  original = join(await exportFixtures(), 'qwen3-export');
  template = (JSON.parse(readFileSync(join(original, 'tokenizer_config.json'), 'utf8')) as { chat_template: string }).chat_template;
  only = jinjaFolder(template);
  both = jinjaFolder(`{{- '${MARK}\\n' }}${template}`, true);
  engine = createEngine(nodeBackend('cpu'), { kvCacheMb: 0 });
  await engine.load([entry('svc/qwen3', original), entry('svc/qwen3-jinja', only), entry('svc/qwen3-both', both)]);
  await modelsSettled(engine);
  expect((await engine.models()).filter((m) => m.status !== 'ready')).toEqual([]);
}, 120_000);

afterAll(async () => {
  await engine?.dispose();
  for (const f of folders) rmSync(f, { recursive: true, force: true });
});

describe('a chat template in chat_template.jinja', () => {
  it("is served: prompt_tokens as transformers.js renders the file's template, greedy text as the folder it was moved out of", async () => {
    const moved = await run('svc/qwen3-jinja');
    const kept = await run('svc/qwen3');
    expect(moved.prompt_tokens).toBe((await referenceIds(only)).length);
    expect(moved.prompt_text).toBe(kept.prompt_text);
    expect(moved.token_ids).toEqual(kept.token_ids);
    expect(moved.text).toBe(kept.text);
  });

  it("wins over tokenizer_config.json's chat_template when the folder has both, as in transformers.js", async () => {
    const r = await run('svc/qwen3-both');
    expect(r.prompt_text.startsWith(`${MARK}\n<|im_start|>system\nBe brief.`)).toBe(true);
    expect(r.prompt_tokens).toBe((await referenceIds(both)).length);
  });

  it('makes a folder whose tokenizer_config.json has no template a chat checkpoint', async () => {
    expect(await validateCheckpoint(nodeBackend('cpu'), only)).toMatchObject({ model_type: 'qwen3', task: 'chat' });
  });
});
