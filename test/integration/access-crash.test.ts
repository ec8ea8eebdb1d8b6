// The file store under kill -9: a real server takes concurrent chat requests (plain
// and streamed) from 40 clients and is killed mid-way. After a restart on the same data
// dir, every response a client received in full has its charge in the ledger, with the
// tokens it reported, and nothing is charged twice (each ledger line carries the
// x-request-id of the request it charged). Then a torn last write (a fragment without
// its newline, as a writer killed mid-write leaves) is cut off by the next start.
//
// Why delivered ⇒ charged: the routes await access.record() (write + fdatasync of the
// ledger line) before building a non-streamed response, and a stream's charge is
// written in the producer's `finally`, before `data: [DONE]` is enqueued.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createKey, hearth, startServer, waitReady, type TestServer } from '../helpers/server.js';

interface Delivered {
  id: string;
  prompt_tokens: number;
  completion_tokens: number;
}

interface Charge {
  request_id?: string;
  prompt_tokens: number;
  completion_tokens: number;
}

function charges(dataDir: string): Charge[] {
  return fs
    .readFileSync(path.join(dataDir, 'access.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as { t: string } & Charge];
      } catch {
        return [];
      }
    })
    .filter((r) => r.t === 'usage');
}

/** One chat request; its usage when the whole response arrived, else null. */
async function chat(url: string, key: string, id: string, stream: boolean): Promise<Delivered | null> {
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': id },
    body: JSON.stringify({
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: `Tell me about request ${id}` }],
      temperature: 1,
      seed: id.length,
      max_tokens: 48,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  });
  if (res.status !== 200) throw new Error(`status ${res.status}`);
  expect(res.headers.get('x-request-id')).toBe(id);
  const text = await res.text();
  if (!stream) {
    const body = JSON.parse(text) as { usage: { prompt_tokens: number; completion_tokens: number } };
    return { id, ...body.usage };
  }
  if (!text.endsWith('data: [DONE]\n\n')) return null; // cut: not delivered in full
  const events = text.split('\n\n').filter((f) => f.startsWith('data: {'));
  const last = JSON.parse(events[events.length - 1]!.slice(6)) as { usage: { prompt_tokens: number; completion_tokens: number } };
  return { id, prompt_tokens: last.usage.prompt_tokens, completion_tokens: last.usage.completion_tokens };
}

describe('file store: kill -9 under concurrent load', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    // (stop() would wait for an exit that a killed process already had)
    for (const s of servers) if (s.proc.exitCode === null && s.proc.signalCode === null) await s.stop('SIGKILL');
  });

  it('loses no charge for a delivered response and charges nothing twice; a torn last write is recovered', async () => {
    const first = await startServer();
    servers.push(first);
    await waitReady(first.url);
    const dataDir = first.dataDir;
    const key = await createKey(dataDir, ['--name', 'load', '--rate-limit', '100000']);

    const delivered: Delivered[] = [];
    let sent = 0;
    let failed = 0;
    let stop = false;
    const worker = async (w: number) => {
      for (let n = 0; !stop; n++) {
        sent++;
        try {
          const d = await chat(first.url, key, `crash-${w}-${n}`, (w + n) % 3 === 0);
          if (d) delivered.push(d);
        } catch {
          failed++;
          return; // the server is gone
        }
      }
    };
    const workers = Array.from({ length: 40 }, (_, w) => worker(w));
    // Let the load build up, then kill the server mid-way through it.
    const t0 = Date.now();
    while (delivered.length < 60 && Date.now() - t0 < 90_000) await new Promise((r) => setTimeout(r, 5));
    first.proc.kill('SIGKILL');
    await first.stop();
    stop = true;
    await Promise.all(workers);
    expect(failed).toBeGreaterThan(0); // requests were in flight at the kill
    expect(delivered.length).toBeGreaterThanOrEqual(20);

    // Restart on the same data dir; nothing torn yet, the ledger is what was fsynced.
    const second = await startServer([], dataDir);
    servers.push(second);
    await waitReady(second.url);

    const ledger = charges(dataDir);
    const byId = new Map<string, Charge[]>();
    for (const c of ledger) byId.set(c.request_id ?? '', [...(byId.get(c.request_id ?? '') ?? []), c]);
    const twice = [...byId.entries()].filter(([, cs]) => cs.length > 1);
    expect(twice).toEqual([]);
    expect(ledger.every((c) => c.request_id?.startsWith('crash-'))).toBe(true);
    const missing = delivered.filter((d) => !byId.has(d.id));
    expect(missing).toEqual([]);
    for (const d of delivered) {
      const [c] = byId.get(d.id)!;
      expect({ prompt: c!.prompt_tokens, completion: c!.completion_tokens }, d.id).toEqual({ prompt: d.prompt_tokens, completion: d.completion_tokens });
    }

    const sum = (xs: { prompt_tokens: number; completion_tokens: number }[]) =>
      xs.reduce((a, x) => ({ requests: a.requests + 1, tokens: a.tokens + x.prompt_tokens + x.completion_tokens }), { requests: 0, tokens: 0 });
    const got = sum(delivered);
    const usage = (JSON.parse(await hearth(['usage', '--json', '--data-dir', dataDir])) as Array<Record<string, number | string>>).find((u) => u.name === 'load')!;
    const charged = { requests: usage.requests as number, tokens: (usage.prompt_tokens as number) + (usage.completion_tokens as number) };
    console.log(
      `kill -9 after ${Date.now() - t0} ms: ${sent} requests sent, ${got.requests} delivered in full (${got.tokens} tokens), ` +
        `${failed} cut by the kill; after restart the ledger charges ${charged.requests} requests (${charged.tokens} tokens), none twice`,
    );
    expect(charged.requests).toBe(ledger.length);
    expect(charged.requests).toBeGreaterThanOrEqual(got.requests);
    expect(charged.tokens).toBeGreaterThanOrEqual(got.tokens);
    // Charged but not delivered can only be requests that were in flight at the kill.
    expect(charged.requests - got.requests).toBeLessThanOrEqual(40);

    // The restarted server serves and charges as before.
    expect(await chat(second.url, key, 'after-restart', false)).not.toBeNull();
    expect(charges(dataDir).filter((c) => c.request_id === 'after-restart')).toHaveLength(1);

    // A torn last write: kill, leave half a usage line, restart.
    second.proc.kill('SIGKILL');
    await second.stop();
    const log = path.join(dataDir, 'access.jsonl');
    const sizeBefore = fs.statSync(log).size;
    fs.appendFileSync(log, '{"t":"usage","ts":1,"account_id":"acct_x","key_id":"key_x","model":"svc/tiny-chat","prompt_to');
    const third = await startServer([], dataDir);
    servers.push(third);
    await waitReady(third.url);
    expect(fs.statSync(log).size).toBe(sizeBefore); // the fragment was cut off
    expect(await chat(third.url, key, 'after-torn', false)).not.toBeNull();
    const final = charges(dataDir);
    expect(final.filter((c) => c.request_id === 'after-torn')).toHaveLength(1);
    expect(final.length).toBe(ledger.length + 2);
    expect(fs.readFileSync(log, 'utf8').endsWith('\n')).toBe(true);
    expect(await third.stop()).toBe(0);
  }, 180_000);
});
