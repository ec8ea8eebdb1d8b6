// hearth models load|unload ID --url U --key K: loads or unloads a model of a running server
// (through /admin/models/{id}/load and /unload), answering once it is done.
import type { ModelState } from '../../engine/protocol.js';
import { HELP_OPTION, parse } from '../args.js';
import { UsageError } from '../errors.js';
import type { Io } from '../io.js';
import { call, modelPath, positionalId, remoteOf } from '../remote.js';

export async function loadOrUnload(action: 'load' | 'unload', args: string[], io: Io, help: string): Promise<number> {
  const cmd = `models ${action}`;
  const options = { ...HELP_OPTION, url: { type: 'string' }, key: { type: 'string' }, force: { type: 'boolean' } } as const;
  const { values, positionals } = parse(cmd, args, options, true);
  if (values.help) return io.out(help), 0;
  const id = positionalId(cmd, positionals);
  const remote = remoteOf(cmd, values);
  if (!remote) throw new UsageError(`${cmd}: give --url URL --key KEY (an admin key of the running server): only a running server holds models in memory`);
  if (values.force && action === 'load') throw new UsageError('models load: --force goes with unload');
  const query = values.force ? '?force=true' : '';
  const m = (await call(remote, 'POST', `${modelPath(id)}/${action}${query}`)) as ModelState;
  const size = m.size_mb !== undefined ? `, ${m.size_mb} MiB` : '';
  io.out(`${id}: ${m.status} on ${remote.url}${action === 'load' ? size : ''}`);
  return 0;
}
