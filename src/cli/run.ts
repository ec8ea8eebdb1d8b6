// The `hearth` command as a function: main(argv, io) → exit status. src/cli/main.ts runs it.

import { describeFsError } from '../front/node/system-errors.js';
import { CliError, UsageError, redactSecrets } from './errors.js';
import { processIo, type Io } from './io.js';
import { packageVersion } from '../paths.js';
import { INCIDENT_HELP, incidentCommand } from './commands/incident.js';
import { KEYS_HELP, keysCommand } from './commands/keys.js';
import { MODELS_HELP, modelsCommand } from './commands/models.js';
import { SERVE_HELP, serveCommand } from './commands/serve.js';
import { PS_HELP, psCommand } from './commands/ps.js';
import { USAGE_HELP, usageCommand } from './commands/usage.js';

export const MAIN_HELP = `Usage: hearth <command> [options]

Serves local language models behind an OpenAI-shaped API.

Commands:
  serve                     run the HTTP server
  keys create|list|revoke   manage API keys
  usage                     requests, tokens and spend per account this month
  models list|add|remove|redeploy|load|unload   the catalog's models; add, remove,
                            redeploy, load or unload models
  ps                        the models a running server has loaded, their size and expiry
  incident add|list         incidents announced on the status page

Run "hearth <command> --help" for a command's options.
Options: -h, --help (this help), -v, --version, --debug (stack traces on errors; or DEBUG=hearth)
`;

const COMMANDS: Record<string, { run: (args: string[], io: Io) => Promise<number>; help: string }> = {
  serve: { run: serveCommand, help: SERVE_HELP },
  keys: { run: keysCommand, help: KEYS_HELP },
  usage: { run: usageCommand, help: USAGE_HELP },
  models: { run: modelsCommand, help: MODELS_HELP },
  ps: { run: psCommand, help: PS_HELP },
  incident: { run: incidentCommand, help: INCIDENT_HELP },
};

/** `--debug` anywhere on the command line, or DEBUG naming hearth (as the debug package reads it). */
export function debugWanted(argv: string[], env: NodeJS.ProcessEnv = process.env): boolean {
  return argv.includes('--debug') || (env.DEBUG ?? '').split(/[\s,]+/).some((p) => p === '*' || /^hearth(:?\*)?$/.test(p));
}

/** A failure as the one line the user reads ("hearth: …"), with the stack after it when debugging. */
export function errorLine(err: unknown, debug: boolean): string {
  const e = err as Error;
  const message = err instanceof CliError ? err.message : (describeFsError(err) ?? e?.message ?? String(err));
  const line = `hearth: ${redactSecrets(String(message)).replace(/\s*\n\s*/g, ' ')}`;
  return debug && e?.stack ? `${line}\n${redactSecrets(e.stack)}` : line;
}

/** Runs the CLI; resolves with the exit status. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const debug = debugWanted(argv);
  const [cmd, ...rest] = argv.filter((a) => a !== '--debug');
  try {
    if (cmd === undefined) {
      io.err(MAIN_HELP);
      return 2;
    }
    if (cmd === '-h' || cmd === '--help') return io.out(MAIN_HELP), 0;
    if (cmd === 'help') {
      const topic = rest[0];
      if (topic === undefined) return io.out(MAIN_HELP), 0;
      const c = COMMANDS[topic];
      if (!c) throw new UsageError(`unknown command "${topic}". Run "hearth --help" for the list.`);
      return io.out(c.help), 0;
    }
    if (cmd === '-v' || cmd === '--version') return io.out(packageVersion()), 0;
    const c = Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd] : undefined;
    if (!c) {
      throw new UsageError(
        cmd.startsWith('-') ? `unknown option "${cmd}". Run "hearth --help".` : `unknown command "${cmd}". Run "hearth --help" for the list.`,
      );
    }
    return await c.run(rest, io);
  } catch (err) {
    // The message says what to do; the stack is for whoever debugs hearth itself.
    io.err(errorLine(err, debug));
    return err instanceof CliError ? err.exitCode : 1;
  }
}
