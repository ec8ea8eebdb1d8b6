// hearth models list (add | remove | redeploy come with the admin API)

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CatalogEntry } from '../../engine/protocol.js';
import { HELP_OPTION, parse } from '../args.js';
import { CliError, UsageError } from '../errors.js';
import { packageRoot } from '../package-root.js';
import { formatTable } from '../table.js';
import type { Io } from '../io.js';

export const MODELS_HELP = `Usage: hearth models <list|add|remove|redeploy> [options]

  hearth models list [--catalog FILE] [--json]
      The catalog's models: id, task, class, context length, and whether the source
      folder exists locally. Default catalog: models/catalog.json of the package.
  hearth models add --id svc/NAME --from <folder | hub repo id> --url URL --key KEY
  hearth models remove <id> --url URL --key KEY
  hearth models redeploy <id> --url URL --key KEY
      (not yet available)

  -h, --help   show this help
`;

export async function modelsCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    io.err(MODELS_HELP);
    return 2;
  }
  if (sub === '-h' || sub === '--help' || sub === 'help') return io.out(MODELS_HELP), 0;
  switch (sub) {
    case 'list':
    case 'ls':
      return list(rest, io);
    case 'add':
    case 'remove':
    case 'redeploy':
      io.err(`hearth models ${sub}: not yet available in this version of Hearth.`);
      return 2;
    default:
      throw new UsageError(`models: unknown subcommand "${sub}" (expected list, add, remove or redeploy). Run "hearth models --help".`);
  }
}

export function defaultCatalogPath(): string {
  return path.join(packageRoot(), 'models', 'catalog.json');
}

/** Reads a catalog: an array of entries, or an object with a `models` array. */
export function readCatalog(file: string): CatalogEntry[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read the catalog ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new CliError(`the catalog ${file} is not valid JSON: ${(err as Error).message}`);
  }
  const entries = Array.isArray(data) ? data : (data as { models?: unknown })?.models;
  if (!Array.isArray(entries)) throw new CliError(`the catalog ${file} holds neither an array of models nor {"models": [...]}`);
  return entries as CatalogEntry[];
}

async function list(args: string[], io: Io): Promise<number> {
  const { values } = parse('models list', args, { ...HELP_OPTION, catalog: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help) return io.out(MODELS_HELP), 0;
  const file = path.resolve(values.catalog ?? defaultCatalogPath());
  const base = path.dirname(file);
  const rows = readCatalog(file).map((e) => {
    const source = typeof e.source === 'string' ? e.source : '';
    return {
      id: e.id,
      task: e.task,
      class: e.class,
      context_length: e.context_length,
      source,
      local: source !== '' && fs.existsSync(path.resolve(base, source)),
    };
  });
  if (values.json) {
    io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  if (!rows.length) {
    io.out(`The catalog ${file} lists no models.`);
    return 0;
  }
  io.out(
    formatTable(
      ['ID', 'TASK', 'CLASS', 'CONTEXT', 'LOCAL', 'SOURCE'],
      rows.map((r) => [String(r.id), String(r.task), String(r.class), r.context_length, r.local ? 'yes' : 'no', r.source]),
    ),
  );
  return 0;
}
