// hearth keys create | list | revoke

import { KEY_PREFIX, isKeyId, isWellFormedKey } from '../../access/keys.js';
import { HELP_OPTION, STORE_OPTIONS, intFlag, parse } from '../args.js';
import { CliError, UsageError } from '../errors.js';
import { dataDirOf, openAccess } from '../store.js';
import { formatTable } from '../table.js';
import type { Io } from '../io.js';

export const KEYS_HELP = `Usage: hearth keys <create|list|revoke> [options]

Manage API keys. Keys are stored only as SHA-256 hashes in the data dir.

  hearth keys create [--name NAME] [--sandbox] [--admin] [--rate-limit N]
      Creates a key (and an account of the same name, unless one exists) and prints
      the key alone on the last line of stdout. It is shown only this once.
        --name NAME        key and account name (default "default")
        --sandbox          a sandbox account: capped monthly spend (serve --sandbox-cap-usd)
        --admin            may call /admin/* routes
        --rate-limit N     requests per minute for this key (default: the server's)
  hearth keys list [--json]
      Lists keys (never the keys themselves).
  hearth keys revoke <key | key id | ->
      Revokes a key; running servers refuse it from their next request.
      "-" reads the key from stdin (keeps it out of shell history).

Common options:
  --data-dir D   where keys and usage live (default ./.hearth)
  --store S      file (default), memory, or a redis:// URL
  -h, --help     show this help
`;

export async function keysCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') {
    if (sub === undefined) {
      io.err(KEYS_HELP);
      return 2;
    }
    io.out(KEYS_HELP);
    return 0;
  }
  switch (sub) {
    case 'create':
      return create(rest, io);
    case 'list':
    case 'ls':
      return list(rest, io);
    case 'revoke':
      return revoke(rest, io);
    default:
      throw new UsageError(`keys: unknown subcommand "${sub}" (expected create, list or revoke). Run "hearth keys --help".`);
  }
}

async function create(args: string[], io: Io): Promise<number> {
  const { values } = parse('keys create', args, {
    ...HELP_OPTION,
    ...STORE_OPTIONS,
    name: { type: 'string' },
    sandbox: { type: 'boolean' },
    admin: { type: 'boolean' },
    'rate-limit': { type: 'string' },
  });
  if (values.help) return io.out(KEYS_HELP), 0;
  const rateLimit = intFlag('keys create', 'rate-limit', values['rate-limit'], 1);
  const name = values.name ?? 'default';
  if (!name.trim()) throw new UsageError('keys create: --name must not be empty');
  const access = await openAccess(values);
  try {
    const created = await access
      .createKey({ name, sandbox: values.sandbox ? true : undefined, admin: values.admin ?? false, rateLimit })
      .catch((err: Error) => {
        throw new CliError(`keys create: ${err.message}`);
      });
    const account = await access.store.getAccount(created.account_id);
    const traits = [
      account?.sandbox ? 'sandbox' : 'not sandbox',
      values.admin ? 'admin' : 'not admin',
      rateLimit ? `${rateLimit} requests/min` : "the server's rate limit",
    ];
    io.out(`Created key ${created.id} "${name}" for account "${account?.name ?? name}" (${created.account_id}): ${traits.join(', ')}.`);
    if (access.store.kind === 'memory') io.out('Note: --store memory keeps nothing; this key is forgotten when the command exits.');
    else if (access.store.kind === 'file') io.out(`Stored (as a hash) in ${dataDirOf(values)}.`);
    else if (access.store.kind === 'redis') io.out('Stored (as a hash) in redis.');
    io.out('Copy the key now: it is shown only once and cannot be recovered.');
    io.out(created.key);
    return 0;
  } finally {
    await access.close();
  }
}

async function list(args: string[], io: Io): Promise<number> {
  const { values } = parse('keys list', args, { ...HELP_OPTION, ...STORE_OPTIONS, json: { type: 'boolean' } });
  if (values.help) return io.out(KEYS_HELP), 0;
  const access = await openAccess(values, { readOnly: true });
  try {
    const keys = await access.listKeys();
    if (values.json) {
      io.out(JSON.stringify(keys, null, 2));
      return 0;
    }
    if (!keys.length) {
      io.out('No keys. Create one with "hearth keys create".');
      return 0;
    }
    io.out(
      formatTable(
        ['ID', 'NAME', 'ACCOUNT', 'SANDBOX', 'ADMIN', 'RATE LIMIT', 'CREATED', 'STATUS'],
        keys.map((k) => [
          k.id,
          k.name,
          k.account,
          k.sandbox ? 'yes' : 'no',
          k.admin ? 'yes' : 'no',
          k.rate_limit !== undefined ? `${k.rate_limit}/min` : 'default',
          k.created.slice(0, 19).replace('T', ' '),
          k.revoked ? `revoked ${k.revoked_at!.slice(0, 19).replace('T', ' ')}` : 'active',
        ]),
      ),
    );
    return 0;
  } finally {
    await access.close();
  }
}

async function revoke(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse('keys revoke', args, { ...HELP_OPTION, ...STORE_OPTIONS }, true);
  if (values.help) return io.out(KEYS_HELP), 0;
  if (positionals.length !== 1) throw new UsageError('keys revoke: give exactly one key (svc_live_…) or key id (key_…)');
  // "-" reads the key from stdin, keeping it out of shell history and process lists.
  const target = positionals[0] === '-' ? (await readStdin()).trim() : positionals[0]!;
  if (!target) throw new UsageError('keys revoke: no key given on stdin');
  // Whatever was pasted is not echoed: it may be some other secret.
  if (!isWellFormedKey(target) && !isKeyId(target)) {
    throw new UsageError(
      target.startsWith(KEY_PREFIX)
        ? `keys revoke: the key given is malformed (expected ${KEY_PREFIX} followed by at least 32 letters and digits)`
        : `keys revoke: give a key (${KEY_PREFIX}…) or a key id (key_…, as "hearth keys list" shows)`,
    );
  }
  const access = await openAccess(values, { readOnly: true });
  try {
    const info = await access.revokeKey(target).catch((err: Error) => {
      throw new CliError(`keys revoke: ${err.message}`);
    });
    io.out(`Revoked key ${info.id} "${info.name}" (account "${info.account}") at ${info.revoked_at}.`);
    return 0;
  } finally {
    await access.close();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
