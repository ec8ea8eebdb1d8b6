// What the model commands share to act on a running server (--url URL --key KEY): the remote,
// its admin calls, and the one model id a command names.
import { explainErrno } from '../front/node/system-errors.js';
import { CliError, UsageError } from './errors.js';

export interface Remote {
  url: string;
  key: string;
}

export function remoteOf(cmd: string, values: { url?: string; key?: string }): Remote | undefined {
  if (values.url === undefined) {
    if (values.key !== undefined) throw new UsageError(`${cmd}: --key goes with --url`);
    return undefined;
  }
  if (!/^https?:\/\//.test(values.url)) throw new UsageError(`${cmd}: --url must be an http(s) URL (got "${values.url}")`);
  const key = values.key ?? process.env.HEARTH_ADMIN_KEY;
  if (!key) throw new UsageError(`${cmd}: --url needs --key KEY (an admin key), or HEARTH_ADMIN_KEY in the environment`);
  return { url: values.url.replace(/\/+$/, ''), key };
}

export async function call(r: Remote, method: string, p: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${r.url}${p}`, {
      method,
      headers: { authorization: `Bearer ${r.key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  } catch (e) {
    throw new CliError(`cannot reach --url ${r.url}: ${explainErrno((e as Error).cause ?? e)}; is a Hearth server running there?`);
  }
  const data = (await res.json().catch(() => ({}))) as { error?: { message?: string; code?: string } };
  if (!res.ok) {
    const hint = res.status === 401 || res.status === 403 ? ' (check --key: it must be an admin key of that server)' : '';
    throw new CliError(`${r.url} answered ${res.status}${data.error?.code ? ` ${data.error.code}` : ''}: ${data.error?.message ?? ''}${hint}`);
  }
  return data;
}

export const modelPath = (id: string) => `/admin/models/${encodeURIComponent(id)}`;

export function positionalId(cmd: string, positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(`${cmd}: give exactly one model id (svc/NAME)`);
  return positionals[0]!;
}
