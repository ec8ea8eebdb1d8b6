// hearth incident add "text" | list

import { appendIncident, incidentsPath, readIncidents } from '../../ops/incidents.js';
import { HELP_OPTION, STORE_OPTIONS, parse } from '../args.js';
import { UsageError } from '../errors.js';
import { dataDirOf } from '../store.js';
import type { Io } from '../io.js';

export const INCIDENT_HELP = `Usage: hearth incident <add|list> [options]

Incidents announced to users on the status page (/status), newest first, with the
time they were announced. They live in <data dir>/incidents.jsonl; running servers
show a new one on the next page load.

  hearth incident add "text"   announce an incident (the time is now, UTC)
  hearth incident list [--json]

  --data-dir D   default ./.hearth
  -h, --help     show this help
`;

export async function incidentCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined) {
    io.err(INCIDENT_HELP);
    return 2;
  }
  if (sub === '-h' || sub === '--help' || sub === 'help') return io.out(INCIDENT_HELP), 0;
  if (sub === 'add') {
    const { values, positionals } = parse('incident add', rest, { ...HELP_OPTION, ...STORE_OPTIONS }, true);
    if (values.help) return io.out(INCIDENT_HELP), 0;
    const text = positionals.join(' ').trim();
    if (!text) throw new UsageError('incident add: give the text, e.g. hearth incident add "Degraded latency on svc/tiny-chat"');
    const dataDir = dataDirOf(values, { create: true });
    const a = await appendIncident(dataDir, text);
    io.out(`${a.at}  ${a.text}\n(appended to ${incidentsPath(dataDir)})`);
    return 0;
  }
  if (sub === 'list' || sub === 'ls') {
    const { values } = parse('incident list', rest, { ...HELP_OPTION, ...STORE_OPTIONS, json: { type: 'boolean' } });
    if (values.help) return io.out(INCIDENT_HELP), 0;
    const list = await readIncidents(dataDirOf(values), 1000);
    if (values.json) io.out(JSON.stringify(list, null, 2));
    else io.out(list.length ? list.map((a) => `${a.at}  ${a.text}`).join('\n') : 'No incidents.');
    return 0;
  }
  throw new UsageError(`incident: unknown subcommand "${sub}" (expected add or list)`);
}
