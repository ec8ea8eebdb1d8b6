// The engine's home in Node: a worker thread, so inference never blocks the HTTP
// server's event loop. The main thread drives it through comlink.
import { parentPort, workerData } from 'node:worker_threads';
import { nodeBackend } from '../src/backends/node.js';
import { createEngine } from '../src/engine/engine.js';
import type { Device } from '../src/engine/protocol.js';
import type { SpeculativeMode } from '../src/engine/spec/draft-policy.js';
import type { ResidencyOptions } from '../src/engine/options.js';
import { exposeEngine, nodeEndpoint } from '../src/engine/rpc.js';
import { nodeHub } from '../src/engine/hub/node.js';
import { startNodeGrammarTrial } from '../src/engine/structured/node-trial.js';
import { setGrammarTrial } from '../src/engine/structured/trial.js';

const { device, kvCacheMb, speculative, threads, hubCacheDir, grammarCompileMs, maxImagePixels, residency } = workerData as {
  device: Device;
  kvCacheMb?: number;
  maxImagePixels?: number;
  speculative?: SpeculativeMode;
  threads?: number;
  hubCacheDir?: string;
  grammarCompileMs?: number;
  /** On-demand loading: load mode, keep-alive, max loaded models, memory budget, load timeout. */
  residency?: ResidencyOptions;
};
// Hub-sourced models download into the data dir (HF_ENDPOINT picks the hub).
const hub = hubCacheDir ? nodeHub({ cacheDir: hubCacheDir }) : undefined;
// Grammars compile first in worker threads of their own, which a compile past its budget ends.
setGrammarTrial(startNodeGrammarTrial({ budgetMs: grammarCompileMs }));
exposeEngine(createEngine(nodeBackend(device, { threads }), { kvCacheMb, speculative, hub, maxImagePixels, ...residency }), nodeEndpoint(parentPort!));
