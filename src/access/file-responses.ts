// The file store's stored responses (Node only): one file each,
// `<dataDir>/responses/<account id>/<response id>.json`, mode 0600. A response is
// written to a temporary file, fsynced and renamed into place (then the folder is
// fsynced), so a crash leaves either the whole response or none of it, and deleting one
// gives its disk space back, which an append-only log could not. The file's mtime is the
// response's creation time (retention reads it without opening files), so a copy that
// does not keep times restarts their clock. The folder of an account is its ownership:
// another account's id is simply not there.
//
// The item index (item_reference): `<account id>/.items/<item id>/<response id>`, an
// empty file per response holding the item, made before the response is renamed into
// place and removed after it is deleted. A lookup trusts only the response files, newest
// first, so a marker a crash left behind (or one of a response since replaced without
// that item) is passed over, and removed by a lookup once it is an hour old; a delete or
// prune of the response takes it away. Markers are not fsynced one by one: after a power
// cut (not a killed process) an item may be found by fewer responses than hold it.

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { toPrune, type ResponseShelf } from './response-shelf.js';
import { responseItems, STORABLE_ID, type ResponsePrune, type StoredItem, type StoredResponse } from './store.js';

export const RESPONSES_DIR = 'responses';
const SUFFIX = '.json';
/** An account's item index, beside its response files (a dot-name: never a response). */
const ITEMS_DIR = '.items';

export class FileShelf implements ResponseShelf {
  constructor(readonly dir: string) {}

  private file(id: string, accountId: string): string | undefined {
    return STORABLE_ID.test(id) && STORABLE_ID.test(accountId) ? path.join(this.dir, accountId, id + SUFFIX) : undefined;
  }

  put(r: StoredResponse): void {
    const file = this.file(r.id, r.account_id)!;
    const folder = path.dirname(file);
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    for (const itemId of responseItems(r).keys()) {
      const holders = path.join(folder, ITEMS_DIR, itemId);
      fs.mkdirSync(holders, { recursive: true, mode: 0o700 });
      fs.closeSync(fs.openSync(path.join(holders, r.id), 'a', 0o600));
    }
    const tmp = path.join(folder, `.${r.id}.${randomBytes(6).toString('hex')}.tmp`);
    const fd = fs.openSync(tmp, 'wx', 0o600);
    try {
      const bytes = Buffer.from(JSON.stringify(r), 'utf8');
      let done = 0;
      while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
      fs.futimesSync(fd, r.created / 1000, r.created / 1000);
      fs.fdatasyncSync(fd);
    } catch (err) {
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
      throw err;
    }
    fs.closeSync(fd);
    fs.renameSync(tmp, file);
    syncFolder(folder);
  }

  get(id: string, accountId: string): StoredResponse | undefined {
    const file = this.file(id, accountId);
    if (!file) return undefined;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const r = JSON.parse(text) as StoredResponse;
    return r.id === id && r.account_id === accountId ? r : undefined;
  }

  delete(id: string, accountId: string): boolean {
    const file = this.file(id, accountId);
    if (!file) return false;
    // Its items, to take its markers out of the index once it is gone.
    let items: string[] = [];
    try {
      const r = this.get(id, accountId);
      if (r) items = [...responseItems(r).keys()];
    } catch {
      // unreadable: deleted all the same; its markers are passed over by lookups
    }
    try {
      fs.unlinkSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    syncFolder(path.dirname(file));
    for (const itemId of items) {
      const holders = path.join(path.dirname(file), ITEMS_DIR, itemId);
      fs.rmSync(path.join(holders, id), { force: true });
      try {
        fs.rmdirSync(holders);
      } catch {
        // other responses still hold the item
      }
    }
    return true;
  }

  item(itemId: string, accountId: string): StoredItem | undefined {
    if (!STORABLE_ID.test(itemId) || !STORABLE_ID.test(accountId)) return undefined;
    const folder = path.join(this.dir, accountId);
    let holders: string[];
    try {
      holders = fs.readdirSync(path.join(folder, ITEMS_DIR, itemId)).filter((n) => STORABLE_ID.test(n));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    // Newest first, by the files' times (their creation times), without opening them.
    const byTime: [string, number][] = [];
    for (const id of holders) {
      try {
        byTime.push([id, fs.statSync(path.join(folder, id + SUFFIX)).mtimeMs]);
      } catch {
        // A marker whose response is not in place: a write in progress, or (an hour on) one that died.
        dropStaleMarker(path.join(folder, ITEMS_DIR, itemId, id));
      }
    }
    byTime.sort((a, b) => b[1] - a[1]);
    for (const [id] of byTime) {
      const r = this.get(id, accountId);
      const item = r && responseItems(r).get(itemId);
      if (item) return { item, response_id: r.id, created: r.created };
    }
    return undefined;
  }

  prune(p: ResponsePrune): number {
    const accounts = p.accountId !== undefined ? [p.accountId] : this.accounts();
    let n = 0;
    for (const acct of accounts) {
      if (!STORABLE_ID.test(acct)) continue;
      const folder = path.join(this.dir, acct);
      if (p.accountId === undefined) dropStaleTemporaries(folder);
      const names = listNames(folder);
      // Nothing to do without stat-ing each file: under the count and no age given.
      if (p.before === undefined && (p.keep === undefined || names.length <= p.keep)) continue;
      const created = new Map<string, number>();
      for (const name of names) {
        try {
          created.set(name.slice(0, -SUFFIX.length), Math.round(fs.statSync(path.join(folder, name)).mtimeMs));
        } catch {
          // deleted meanwhile (another process sharing the data dir)
        }
      }
      for (const id of toPrune(created, p.accountId === undefined ? { before: p.before } : p)) if (this.delete(id, acct)) n++;
    }
    return n;
  }

  private accounts(): string[] {
    try {
      return fs.readdirSync(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }
}

/** The response files of one account's folder (not the temporary files of writes in progress). */
function listNames(folder: string): string[] {
  try {
    return fs.readdirSync(folder).filter((n) => n.endsWith(SUFFIX) && !n.startsWith('.'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

/** Temporary files an hour old belong to writers that died mid-write. */
function dropStaleTemporaries(folder: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(folder).filter((n) => n.startsWith('.') && n.endsWith('.tmp'));
  } catch {
    return;
  }
  for (const n of names) {
    try {
      const file = path.join(folder, n);
      if (Date.now() - fs.statSync(file).mtimeMs > 3_600_000) fs.rmSync(file, { force: true });
    } catch {
      // gone already
    }
  }
}

/** Removes an index marker an hour old whose response never came (its writer died mid-write). */
function dropStaleMarker(file: string): void {
  try {
    if (Date.now() - fs.statSync(file).mtimeMs > 3_600_000) fs.rmSync(file, { force: true });
  } catch {
    // gone already
  }
}

/** Makes a rename or unlink in `folder` durable (where the platform can fsync a folder). */
function syncFolder(folder: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(folder, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Windows cannot open a folder for fsync; the rename is as durable as it gets there.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
