// The same router and engine in this Node process (onnxruntime-node, CPU): what the
// browser's answers are compared with.
import { createAccess } from '../../src/access/access.js';
import { createMemoryStore } from '../../src/access/memory-store.js';
import { createRouter } from '../../src/api/router.js';
import { nodeBackend } from '../../src/backends/node.js';
import { createEngine } from '../../src/engine/engine.js';
import { loadCatalog } from '../../src/front/node/catalog.js';
import { defaultCatalogFile } from '../../src/paths.js';
import { createRuntime, modelsSettled } from '../../src/runtime.js';

export async function nodeReference(models = ['svc/tiny-chat', 'svc/tiny-embed']) {
  const catalog = await loadCatalog(defaultCatalogFile(), models);
  const engine = createEngine(nodeBackend('cpu'));
  const runtime = createRuntime({ engine, access: createAccess({ store: createMemoryStore(), acceptAnyWellFormedKey: true }), catalog });
  await modelsSettled(engine);
  const router = createRouter(runtime);
  const key = `svc_live_${'n0de'.repeat(8)}`;
  return {
    async post(path: string, body: unknown): Promise<any> {
      const res = await router.fetch(
        new Request(`http://node.test${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
      return res.json();
    },
    close: () => runtime.close(),
  };
}
