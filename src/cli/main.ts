// Entry of the `hearth` command: bin/hearth.js imports the compiled copy of this file,
// and `tsx src/cli/main.ts …` runs it from source. The commands live in ./run.ts.

import { main } from './run.js';

const code = await main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`hearth: ${(err as Error)?.stack ?? String(err)}\n`);
  return 1;
});
process.exitCode = code;
// `serve` resolves once its server has closed after a signal: whatever might still hold
// the event loop (a worker that ignored dispose) must not keep the process alive.
if (process.argv[2] === 'serve') process.exit(code);
