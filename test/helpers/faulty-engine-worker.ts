// The real engine worker (worker/node.ts), plus a way for a test to make it fail as a worker
// fails in the wild: the test writes `crash` (an uncaught exception) or `block` (the thread
// stuck in synchronous work, as in a long WASM call) to the file named by
// HEARTH_TEST_WORKER_FAULT, which this worker polls; each fault is taken once.
import { existsSync, readFileSync, rmSync } from 'node:fs';

await import('../../worker/node.js');

const file = process.env.HEARTH_TEST_WORKER_FAULT;
if (file) {
  setInterval(() => {
    if (!existsSync(file)) return;
    const fault = readFileSync(file, 'utf8').trim();
    rmSync(file, { force: true });
    if (fault === 'crash') throw new Error('boom: the test crashed the engine worker');
    if (fault === 'block') for (const end = Date.now() + 120_000; Date.now() < end; );
  }, 20).unref();
}
