// hearth usage

import { HELP_OPTION, STORE_OPTIONS, parse } from '../args.js';
import { openAccess } from '../store.js';
import { formatTable } from '../table.js';
import type { Io } from '../io.js';

export const USAGE_HELP = `Usage: hearth usage [--data-dir D] [--store S] [--json]

Per account, this UTC calendar month: name, sandbox, requests, prompt_tokens,
completion_tokens, spend_usd.

  --json         print a JSON array of those objects
  --data-dir D   where keys and usage live (default ./.hearth)
  --store S      file (default), memory, or a redis:// URL
  -h, --help     show this help
`;

export async function usageCommand(args: string[], io: Io): Promise<number> {
  const { values } = parse('usage', args, { ...HELP_OPTION, ...STORE_OPTIONS, json: { type: 'boolean' } });
  if (values.help) return io.out(USAGE_HELP), 0;
  const access = await openAccess(values, { readOnly: true });
  try {
    const rows = (await access.usageThisMonth()).map((u) => ({
      name: u.name,
      sandbox: u.sandbox,
      requests: u.requests,
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
      spend_usd: u.spend_usd,
    }));
    if (values.json) {
      io.out(JSON.stringify(rows, null, 2));
      return 0;
    }
    const month = new Date().toISOString().slice(0, 7);
    if (!rows.length) {
      io.out(`No accounts yet (month ${month} UTC).`);
      return 0;
    }
    io.out(`Usage for ${month} (UTC):`);
    io.out(
      formatTable(
        ['ACCOUNT', 'SANDBOX', 'REQUESTS', 'PROMPT TOKENS', 'COMPLETION TOKENS', 'SPEND USD'],
        rows.map((r) => [r.name, r.sandbox ? 'yes' : 'no', r.requests, r.prompt_tokens, r.completion_tokens, formatUsd(r.spend_usd)]),
      ),
    );
    return 0;
  } finally {
    await access.close();
  }
}

function formatUsd(x: number): string {
  return x === 0 ? '0' : x < 0.01 ? x.toFixed(6) : x.toFixed(4);
}
