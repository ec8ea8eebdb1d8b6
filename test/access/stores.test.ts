import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/access/memory-store.js';
import { openFileStore } from '../../src/access/file-store.js';
import { openStore } from '../../src/access/open-store.js';
import { describeStoreContract } from './store-contract.js';
import { tempDir } from './helpers.js';

describeStoreContract('memory', () => createMemoryStore());
describeStoreContract('file', () => openFileStore(tempDir()));
// The file store must give the same answers after a reopen (everything replayed from the log).
describeStoreContract('file (reopened per call)', () => reopening(tempDir()));

/** A file store that reopens itself before every call: every answer comes from a replay. */
function reopening(dir: string) {
  const live = openFileStore(dir);
  return new Proxy(live, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function' || prop === 'close' || prop === 'takeSlot') return typeof v === 'function' ? v.bind(target) : v;
      return async (...args: unknown[]) => {
        const res = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const again = openFileStore(dir);
        try {
          if (prop.toString().startsWith('create') || ['appendUsage', 'revokeKey', 'reserve', 'renewReservation', 'settle', 'recordDelivery', 'settleOrphans', 'putResponse', 'deleteResponse', 'pruneResponses'].includes(prop.toString())) return res;
          return await (Reflect.get(again, prop) as (...a: unknown[]) => Promise<unknown>).apply(again, args);
        } finally {
          await again.close();
        }
      };
    },
  });
}

describe('openStore', () => {
  it('opens file and memory stores', async () => {
    const dir = tempDir();
    const f = await openStore('file', dir);
    expect(f.kind).toBe('file');
    await f.close();
    expect(fs.existsSync(path.join(dir, 'access.jsonl'))).toBe(true);
    const m = await openStore('memory', dir);
    expect(m.kind).toBe('memory');
    await m.close();
    const d = await openStore(undefined, tempDir());
    expect(d.kind).toBe('file');
    await d.close();
  });

  it('fails fast on an unreachable redis, without echoing the password', async () => {
    // Port 1 on loopback: nothing listens there.
    const err = await openStore('redis://user:s3cret@127.0.0.1:1/0', tempDir()).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(/cannot use the redis store at redis:\/\/127\.0\.0\.1:1\/0/);
    expect((err as Error).message).not.toContain('s3cret');
  });

  it('refuses an unknown spec', async () => {
    await expect(openStore('sqlite', tempDir())).rejects.toThrow(/unknown store/);
  });
});
