// The engine's home in Node: a worker thread, so inference never blocks the HTTP
// server's event loop. The main thread drives it through comlink.
import { parentPort, workerData } from 'node:worker_threads';
import { nodeBackend } from '../src/backends/node.js';
import { createEngine } from '../src/engine/engine.js';
import type { Device } from '../src/engine/protocol.js';
import { exposeEngine, nodeEndpoint } from '../src/engine/rpc.js';

const { device, kvCacheMb } = workerData as { device: Device; kvCacheMb?: number };
exposeEngine(createEngine(nodeBackend(device), { kvCacheMb }), nodeEndpoint(parentPort!));
