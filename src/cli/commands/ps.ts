// hearth ps: the models a running server holds in memory now, as `ollama ps` lists them: name,
// status, size (the server's estimate), and when each unloads.
import type { ModelState } from '../../engine/protocol.js';
import { HELP_OPTION, parse } from '../args.js';
import type { Io } from '../io.js';
import { formatTable } from '../table.js';
import { call, remoteOf } from '../remote.js';
import { UsageError } from '../errors.js';

export const PS_HELP = `Usage: hearth ps --url URL --key KEY [--json]

Lists the models a running server has loaded (or is loading), with the memory each is
estimated to take and when it unloads (its keep-alive after its last request).

  --url URL    the server (http://127.0.0.1:8080)
  --key KEY    an admin key of that server (or HEARTH_ADMIN_KEY in the environment)
  --all        also the models that are not loaded
  --json       a JSON array of {id, status, size_mb, expires_at, in_flight}
  -h, --help   show this help
`;

const HELD = new Set(['ready', 'loading', 'starting', 'redeploying']);

export async function psCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse('ps', args, { ...HELP_OPTION, url: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean' }, all: { type: 'boolean' } });
  if (values.help) return io.out(PS_HELP), 0;
  const remote = remoteOf('ps', values);
  if (!remote) throw new UsageError('ps: give --url URL --key KEY (an admin key of the running server)');
  const list = (await call(remote, 'GET', '/admin/models')) as { data: ModelState[] };
  const shown = list.data.filter((m) => values.all || HELD.has(m.status));
  if (values.json) {
    const rows = shown.map((m) => ({ id: m.id, status: m.status, size_mb: m.size_mb ?? null, expires_at: m.expires_at ?? null, in_flight: m.in_flight ?? 0 }));
    io.out(JSON.stringify(rows, null, 2));
    return 0;
  }
  const now = Date.now() / 1000;
  const rows = shown.map((m) => [m.id, m.status, m.size_mb === undefined ? '' : `${m.size_mb} MiB`, until(m, now)]);
  io.out(formatTable(['NAME', 'STATUS', 'SIZE', 'UNTIL'], rows));
  return 0;
}

/** When a model unloads, in words: "4m59s from now", "in use", "forever", or nothing while it is not loaded. */
export function until(m: Pick<ModelState, 'status' | 'expires_at' | 'in_flight'>, nowSeconds: number): string {
  if (m.status !== 'ready' && m.status !== 'redeploying') return '';
  if (m.in_flight) return 'in use';
  if (m.expires_at === null || m.expires_at === undefined) return 'forever';
  const left = Math.max(0, Math.round(m.expires_at - nowSeconds));
  const h = Math.floor(left / 3600);
  const min = Math.floor((left % 3600) / 60);
  const s = left % 60;
  return `${h ? `${h}h` : ''}${h || min ? `${min}m` : ''}${s}s from now`;
}
