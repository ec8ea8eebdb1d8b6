// The file store (the embedded default; Node only). One append-only JSON-lines log,
// `<dataDir>/access.jsonl`, replayed on open:
//
//   {"t":"header","format":"hearth-access","version":1,"created":…}
//   {"t":"account","id":"acct_…","name":"…","sandbox":false,"created":…}
//   {"t":"key","id":"key_…","account_id":"acct_…","hash":"<sha256 hex>","name":"…","admin":false,"rate_limit":120,"created":…}
//   {"t":"revoke","id":"key_…","at":…}
//   {"t":"usage","ts":…,"account_id":"…","key_id":"…","model":"svc/…","prompt_tokens":…,"completion_tokens":…,"cost_usd":…,"hold":"hold_…"}
//   {"t":"reserve","id":"hold_…","account_id":"…","amount_usd":…,"expires":…,"pid":…,"host":"…","proc":"…"}
//   {"t":"renew","id":"hold_…","amount_usd":…,"expires":…}
//   {"t":"release","id":"hold_…","ts":…}
//   {"t":"deliver","id":"hold_…","expires":…,<the usage fields>,"pid":…,"host":"…","proc":"…"}
//   {"t":"deliver","id":"hold_…","expires":…,"ts":…,"completion_tokens":…,"cost_usd":…}
//
// A request's hold on the spending cap is a reserve line; its settlement is one usage
// line naming the hold (charge and release in one write, so a crash cannot keep one
// without the other) or a release line. A stream's hold (capped or not) also has deliver
// lines, at least every 32 tokens and every second: what it has delivered so far, the
// first line whole, the later ones only what changed. A hold left by a process killed
// mid-request (kill -9) is settled when a store is next opened and its pid is gone on
// this machine: charged its last delivery, or released when it has none; otherwise
// (another machine's pid) it stops counting when it expires (the holder renews it while
// the request runs), and a delivery whose lease ran out settles to what it recorded. The
// check-and-hold is exact within one process; servers sharing a cap across processes use
// the redis store.
//
// Each mutation is one write() of a whole line on an O_APPEND descriptor, then
// fdatasync (renew and deliver lines skip it: a write() outlives the process, and the
// next synced line takes them along), so a crash (kill -9) loses nothing that was acknowledged, and several
// processes (a server, the CLI) can append to the same file. A torn last line (no
// newline: the writer died mid-write) is cut off on open; lines that do not parse are
// skipped. Before answering, the store reads whatever other processes appended since
// it last looked (one fstat when nothing changed). Rate windows live in this
// process only. Keys are never written, only their SHA-256 hashes. Mode 0600.
// Stored responses live beside the log, one file each (file-responses.ts).

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Reservation, ReserveResult } from './store.js';
import { StateBackedStore } from './memory-store.js';
import { holderGone, thisHolder } from './holder.js';
import { FileShelf, RESPONSES_DIR } from './file-responses.js';
import { AccessState, type HolderProcess, type LogRecord } from './state.js';

export const ACCESS_LOG = 'access.jsonl';
const FORMAT_VERSION = 1;
const NL = 0x0a;

export interface FileStoreInfo {
  path: string;
  /** Lines skipped because they did not parse (or had an unknown version). */
  skippedLines: number;
  /** Bytes of a torn last line cut off on open. */
  truncatedBytes: number;
}

export class FileStore extends StateBackedStore {
  readonly kind = 'file';
  readonly info: FileStoreInfo;
  protected readonly shelf: FileShelf;
  private fd: number;
  /** Bytes of the file consumed (always just after a newline, or 0). */
  private offset = 0;
  /** Bytes after `offset` that do not end in a newline yet. */
  private tail = 0;

  private constructor(readonly file: string) {
    super();
    this.info = { path: file, skippedLines: 0, truncatedBytes: 0 };
    this.shelf = new FileShelf(path.join(path.dirname(file), RESPONSES_DIR));
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    this.fd = fs.openSync(file, 'a+', 0o600);
    try {
      // A file created by other means (copied, restored) may be readable by others.
      if (process.platform !== 'win32' && (fs.fstatSync(this.fd).mode & 0o077) !== 0) fs.fchmodSync(this.fd, 0o600);
    } catch {
      // not our file to change: leave it
    }
  }

  static open(dataDir: string): FileStore {
    const store = new FileStore(path.resolve(dataDir, ACCESS_LOG));
    try {
      store.sync();
      if (store.tail > 0) {
        // A writer died mid-line: cut the fragment off so the next append starts clean.
        fs.ftruncateSync(store.fd, store.offset);
        store.info.truncatedBytes = store.tail;
        store.tail = 0;
      }
      if (store.offset === 0) store.commit({ t: 'header', format: 'hearth-access', version: FORMAT_VERSION, created: Date.now() }, true);
      // Every charge a killed process settled is in the log already (a reply is only sent
      // once its charge is written); what a kill leaves is its streams' deliveries.
      store.settleOrphansNow(Date.now());
    } catch (err) {
      fs.closeSync(store.fd);
      throw err;
    }
    return store;
  }

  override reserve(r: Reservation, capUsd: number, month: string, now: number): Promise<ReserveResult> {
    return super.reserve({ ...r, ...this.holder() }, capUsd, month, now);
  }

  protected override holder(): HolderProcess {
    return thisHolder();
  }

  protected override holderGone(h: HolderProcess): boolean {
    return holderGone(h);
  }

  /** Reads and applies what was appended since the last look (by us or anyone else). */
  protected override sync(): void {
    const size = fs.fstatSync(this.fd).size;
    if (size < this.offset) {
      // Truncated under us: start over.
      this.state = new AccessState();
      this.offset = 0;
      this.tail = 0;
    }
    if (size === this.offset + this.tail) return;
    const buf = Buffer.alloc(size - this.offset);
    let got = 0;
    while (got < buf.length) {
      const n = fs.readSync(this.fd, buf, got, buf.length - got, this.offset + got);
      if (n === 0) break;
      got += n;
    }
    const end = buf.lastIndexOf(NL, got - 1);
    if (end < 0) {
      this.tail = got;
      return;
    }
    let start = 0;
    while (start <= end) {
      const nl = buf.indexOf(NL, start);
      if (nl > start) this.applyLine(buf.toString('utf8', start, nl));
      start = nl + 1;
    }
    this.offset += end + 1;
    this.tail = got - (end + 1);
  }

  private applyLine(line: string): void {
    let r: LogRecord;
    try {
      r = JSON.parse(line) as LogRecord;
    } catch {
      this.info.skippedLines++;
      return;
    }
    if (!r || typeof r !== 'object' || typeof r.t !== 'string') {
      this.info.skippedLines++;
      return;
    }
    if (r.t === 'header' && r.version > FORMAT_VERSION) {
      throw new Error(`${this.file} was written by a newer Hearth (format version ${r.version}); upgrade Hearth to read it`);
    }
    this.state.apply(r);
  }

  protected commit(record: LogRecord, durable: boolean): void {
    // A fragment still without its newline belongs to a writer that died (or, in theory,
    // one mid-write): start on a fresh line so it cannot swallow ours.
    const line = (this.tail > 0 ? '\n' : '') + JSON.stringify(record) + '\n';
    const bytes = Buffer.from(line, 'utf8');
    let done = 0;
    while (done < bytes.length) done += fs.writeSync(this.fd, bytes, done, bytes.length - done);
    if (durable) fs.fdatasyncSync(this.fd);
    this.sync(); // applies our own line (and anything appended before it)
  }

  override async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    fs.closeSync(this.fd);
  }
}

export function openFileStore(dataDir: string): FileStore {
  return FileStore.open(dataDir);
}
