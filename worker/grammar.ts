// A grammar trial worker (src/engine/structured/trial.ts): compiles grammars with an XGrammar
// instance of its own, so that one that crashes XGrammar or runs too long can be ended here
// without touching the engine's.
import { parentPort } from 'node:worker_threads';
import { loadXGrammarInNode } from '../src/backends/node-xgrammar.js';
import { setXGrammarLoader } from '../src/engine/structured/xgrammar.js';
import { trialRunner, type TrialMessage } from '../src/engine/structured/trial-runner.js';

setXGrammarLoader(loadXGrammarInNode);
const run = trialRunner((id) => parentPort!.postMessage({ id, started: true }));
// One at a time, in order: XGrammar's work is synchronous anyway, and the host times each.
let queue = Promise.resolve();
parentPort!.on('message', (m: TrialMessage) => {
  queue = queue.then(async () => parentPort!.postMessage(await run(m)));
});
