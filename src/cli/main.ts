// Entry of the `hearth` command: bin/hearth.js imports the compiled copy of this file,
// and `tsx src/cli/main.ts …` runs it from source. The commands live in ./run.ts.

import { debugWanted, errorLine, main } from './run.js';

const argv = process.argv.slice(2);
// Whatever escapes the commands (an 'error' event nobody listened to, a rejected promise
// nobody awaited) is still one line, not Node's stack trace.
const fatal = (err: unknown): never => {
  process.stderr.write(errorLine(err, debugWanted(argv)) + '\n');
  process.exit(1);
};
process.on('uncaughtException', fatal);
process.on('unhandledRejection', fatal);

const code = await main(argv).catch(fatal);
process.exitCode = code;
// `serve` resolves once its server has closed after a signal: whatever might still hold
// the event loop (a worker that ignored dispose) must not keep the process alive.
if (argv.find((a) => a !== '--debug') === 'serve') process.exit(code);
