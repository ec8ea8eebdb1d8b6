// Why a model failed to load, where a client looks: GET /v1/models/{id} (and the
// list) carries `status_detail` while the model is failed, and a request to it is a
// 503 whose message gives the reason. Real engine, real router; the checkpoints are
// tiny-chat with its ONNX file missing, and with one onnxruntime refuses to parse.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccess } from '../../src/access/access.js';
import { createMemoryStore } from '../../src/access/memory-store.js';
import { createRouter } from '../../src/api/router.js';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import type { CatalogEntry } from '../../src/engine/protocol.js';
import { createRuntime, modelsSettled } from '../../src/runtime.js';
import type { Runtime } from '../../src/types.js';
import { fixtures } from '../helpers/fixtures.js';
import { validateAgainst } from '../helpers/openapi.js';

const AUTH = { authorization: `Bearer svc_live_${'a1B2'.repeat(8)}` };
const dirs: string[] = [];
let runtime: Runtime;
let router: ReturnType<typeof createRouter>;

/** tiny-chat's folder, with `change` applied to a copy. */
function brokenCopy(tinyChat: string, change: (folder: string) => void): string {
  const folder = mkdtempSync(join(tmpdir(), 'hearth-failed-'));
  dirs.push(folder);
  cpSync(tinyChat, folder, { recursive: true });
  change(folder);
  return folder;
}

const entry = (id: string, source: string): CatalogEntry => ({
  id, task: 'chat', class: '0.3M', context_length: 2048, source, price: { input_per_1m: 0, output_per_1m: 0 },
});

const get = async (path: string) => (await router.fetch(new Request(`http://hearth.test${path}`, { headers: AUTH }))).json();
const chat = (model: string) =>
  router.fetch(
    new Request('http://hearth.test/v1/chat/completions', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }], temperature: 0 }),
    }),
  );

beforeAll(async () => {
  const tinyChat = join(await fixtures(), 'tiny-chat');
  const missing = brokenCopy(tinyChat, (f) => rmSync(join(f, 'onnx', 'model.onnx')));
  const corrupt = brokenCopy(tinyChat, (f) => writeFileSync(join(f, 'onnx', 'model.onnx'), 'not a protobuf graph'));
  runtime = createRuntime({
    engine: createEngine(nodeBackend('cpu')),
    access: createAccess({ store: createMemoryStore(), acceptAnyWellFormedKey: true }),
    catalog: [entry('svc/tiny-chat', tinyChat), entry('svc/missing', missing), entry('svc/corrupt', corrupt)],
  });
  await modelsSettled(runtime.engine);
  router = createRouter(runtime);
}, 60_000);

afterAll(async () => {
  await runtime?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a model that failed to load', () => {
  it('names the missing ONNX file in status_detail, in GET /v1/models/{id} and in the list (a ready model has none)', async () => {
    const one = await get('/v1/models/svc%2Fmissing');
    expect(one).toMatchObject({ id: 'svc/missing', status: 'failed' });
    expect(one.status_detail).toMatch(/onnx\/model\.onnx is missing/);
    expect(validateAgainst('Model', one)).toEqual([]);
    const list = await get('/v1/models');
    const listed = (id: string) => list.data.find((m: { id: string }) => m.id === id);
    expect(listed('svc/missing').status_detail).toBe(one.status_detail);
    expect(listed('svc/tiny-chat')).toMatchObject({ status: 'ready' });
    expect(listed('svc/tiny-chat')).not.toHaveProperty('status_detail');
  });

  it('answers a chat request with 503 model_not_ready whose message gives the missing file', async () => {
    const res = await chat('svc/missing');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    const { error } = await res.json();
    expect(error).toMatchObject({ type: 'unavailable_error', code: 'model_not_ready' });
    expect(error.message).toBe(`The model \`svc/missing\` failed to load: ${(await get('/v1/models/svc/missing')).status_detail}`);
    expect(error.message).toMatch(/onnx\/model\.onnx is missing/);
  });

  it("gives onnxruntime's refusal of a graph it cannot parse, in status_detail and in the 503's message", async () => {
    const { status, status_detail } = await get('/v1/models/svc/corrupt');
    expect(status).toBe('failed');
    expect(status_detail).toMatch(/protobuf parsing failed/i);
    const res = await chat('svc/corrupt');
    expect(res.status).toBe(503);
    expect((await res.json()).error.message).toContain(status_detail);
  });
});
