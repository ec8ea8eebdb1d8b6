import type { RequestHandler } from 'msw';
import { writeFixtures } from '../../../models/index.js';
import { createAccess } from '../../access/access.js';
import { createMemoryStore } from '../../access/memory-store.js';
import { startNodeEngine } from '../../engine/client/node.js';
import type { Device } from '../../engine/protocol.js';
import { createRuntime, modelsSettled } from '../../runtime.js';
import { loadCatalog } from '../node/catalog.js';
import { entryFromSource, sourceId, splitModels } from '../../ops/model-source.js';
import { defaultCatalogFile } from '../../paths.js';
import { handlersFor } from './handlers.js';

export interface HearthHandlersOptions {
  /** Answer only under this base URL (default: any origin's /v1). */
  baseURL?: string;
  /** The keys accepted. Omitted: any well-formed svc_live_ key, since a test double has no accounts. */
  apiKeys?: string[];
  /** What to serve (default: the fixtures): catalog ids, or local checkpoint folders, each
   * served as `svc/<folder name>` as `hearth serve --models` serves them. */
  models?: string[];
  device?: Device;
  /** Hosts (name or name:port) whose http(s) image URLs may be fetched, as `hearth serve
   * --image-url-hosts` (default none: data: URLs only). */
  imageUrlHosts?: string[];
}

export type HearthHandlers = RequestHandler[] & { close(): Promise<void> };

/**
 * In-process Hearth for an application's tests: `setupServer(...await hearthHandlers())`
 * and its OpenAI client talks to a real small model with no network. The engine runs
 * in a worker thread; it resolves once the models are loaded. `close()` stops the
 * worker (optional: it does not hold the process open).
 */
export async function hearthHandlers(options: HearthHandlersOptions = {}): Promise<HearthHandlers> {
  await writeFixtures({ ifMissing: true });
  const { ids, sources: folders } = splitModels(options.models, (src) => src.kind === 'folder');
  const catalog = [
    ...(ids && !ids.length ? [] : await loadCatalog(defaultCatalogFile(), ids)),
    ...(await Promise.all(folders.map(({ item, src }) => entryFromSource({ id: sourceId(src), from: item }, src)))),
  ];
  const access = createAccess({ store: createMemoryStore(), acceptAnyWellFormedKey: !options.apiKeys });
  for (const key of options.apiKeys ?? []) await access.addKey(key, { name: 'msw' });
  const runtime = createRuntime({ engine: startNodeEngine({ device: options.device }), access, catalog });
  // A test double should answer at once rather than with 503 while loading; the
  // openai SDK's retry of a mocked response can also stall on MSW's teed body.
  await modelsSettled(runtime.engine);
  const imageUrls = options.imageUrlHosts?.length ? { hosts: options.imageUrlHosts } : undefined;
  return Object.assign(handlersFor(runtime, options.baseURL, { imageUrls }), { close: () => runtime.close() });
}
