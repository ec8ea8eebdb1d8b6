// Where a `hearth serve` process's memory is, read from outside it: /proc for the whole
// process (RSS, and RSS by kind of mapping), the inspector for each thread (JS heap after a
// full GC, memory off the heap, WASM memories alive). The server must run with
// --inspect=127.0.0.1:0 (NODE_OPTIONS, for it alone); `connectInspector(output)` finds the URL
// in what it printed. Used by bench/memory-probe.ts.
import { readFileSync } from 'node:fs';

export const MB = 2 ** 20;

// ---------- the inspector: the main thread and every worker thread ----------

type Json = Record<string, unknown>;
export interface Thread {
  /** JS heap in use (after a full GC, unless the snapshot was taken without one). */
  heapMb: number;
  /** JS heap the thread holds (committed), in use or not. */
  heapTotalMb: number;
  externalMb: number;
  wasmCount: number;
  wasmMb: number;
}

export class Inspector {
  private ws!: WebSocket;
  private id = 0;
  private readonly waiting = new Map<number, (r: Json) => void>();
  private readonly workerWaiting = new Map<string, (r: Json) => void>();
  readonly workers = new Map<string, string>(); // sessionId → url/title

  static async connect(url: string): Promise<Inspector> {
    const i = new Inspector();
    i.ws = new WebSocket(url);
    await new Promise((resolve, reject) => {
      i.ws.onopen = resolve;
      i.ws.onerror = reject;
    });
    i.ws.onmessage = (ev) => i.receive(JSON.parse(String(ev.data)) as Json);
    return i;
  }

  private receive(m: Json): void {
    if (typeof m.id === 'number') {
      this.waiting.get(m.id)?.(m);
      this.waiting.delete(m.id);
      return;
    }
    if (m.method === 'NodeWorker.attachedToWorker') {
      const p = m.params as { sessionId: string; workerInfo: { url: string; title: string } };
      this.workers.set(p.sessionId, `${p.workerInfo.title} ${p.workerInfo.url}`);
    } else if (m.method === 'NodeWorker.detachedFromWorker') {
      this.workers.delete((m.params as { sessionId: string }).sessionId);
    } else if (m.method === 'NodeWorker.receivedMessageFromWorker') {
      const p = m.params as { sessionId: string; message: string };
      const inner = JSON.parse(p.message) as Json;
      if (typeof inner.id === 'number') {
        const k = `${p.sessionId}:${inner.id}`;
        this.workerWaiting.get(k)?.(inner);
        this.workerWaiting.delete(k);
      }
    }
  }

  /** A command to the main thread (session undefined) or to a worker's session. */
  async send(method: string, params: Json = {}, session?: string): Promise<Json> {
    const id = ++this.id;
    if (!session) {
      const r = await new Promise<Json>((resolve) => {
        this.waiting.set(id, resolve);
        this.ws.send(JSON.stringify({ id, method, params }));
      });
      if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
      return r.result as Json;
    }
    const r = await new Promise<Json>((resolve) => {
      this.workerWaiting.set(`${session}:${id}`, resolve);
      void this.send('NodeWorker.sendMessageToWorker', { sessionId: session, message: JSON.stringify({ id, method, params }) });
    });
    if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
    return r.result as Json;
  }

  /**
   * One thread's JS heap (after a full GC unless `gc` is false), its memory off the heap (ArrayBuffers'
   * contents, WASM memories), and the WebAssembly.Memory objects alive there (looked for only with
   * `gc`: the search collects garbage itself).
   */
  async thread(session?: string, gc = true): Promise<Thread> {
    await this.send('HeapProfiler.enable', {}, session).catch(() => undefined);
    if (gc) await this.send('HeapProfiler.collectGarbage', {}, session);
    const heap = (await this.send('Runtime.getHeapUsage', {}, session)) as { usedSize: number; totalSize: number };
    let [count, bytes] = [NaN, NaN];
    if (gc) {
      // In an object group of their own, released after: what the inspector holds on to stays alive.
      const objectGroup = 'memory-probe';
      const proto = (await this.send('Runtime.evaluate', { expression: 'WebAssembly.Memory.prototype', objectGroup }, session)) as { result: { objectId: string } };
      const found = (await this.send('Runtime.queryObjects', { prototypeObjectId: proto.result.objectId, objectGroup }, session)) as { objects: { objectId: string } };
      const sum = (await this.send(
        'Runtime.callFunctionOn',
        { objectId: found.objects.objectId, functionDeclaration: 'function () { return [this.length, this.reduce((a, m) => a + m.buffer.byteLength, 0)]; }', returnByValue: true, objectGroup },
        session,
      )) as { result: { value: [number, number] } };
      await this.send('Runtime.releaseObjectGroup', { objectGroup }, session);
      [count, bytes] = sum.result.value;
    }
    // Off the JS heap: ArrayBuffers' contents and other memory V8 was told about, WASM memories included.
    const usage = (await this.send('Runtime.evaluate', { expression: 'process.memoryUsage().external', returnByValue: true }, session)) as { result: { value: number } };
    return { heapMb: heap.usedSize / MB, heapTotalMb: heap.totalSize / MB, externalMb: usage.result.value / MB, wasmCount: count, wasmMb: bytes / MB };
  }

  close(): void {
    this.ws.close();
  }
}

// ---------- /proc ----------

export function rss(pid: number): { rssMb: number; hwmMb: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
}

/**
 * Resident MiB by kind of mapping: WASM memories (V8 maps the usable part read-write, then an
 * inaccessible guard region of 8 GiB and more right after it), glibc malloc arenas (64 MiB-aligned
 * regions of at most 64 MiB), the brk [heap], files, and the other anonymous mappings.
 */
export function smaps(pid: number): Record<string, number> {
  const maps: { start: bigint; end: bigint; perms: string; name: string; rssKb: number }[] = [];
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) maps.push({ start: BigInt(`0x${head[1]}`), end: BigInt(`0x${head[2]}`), perms: head[3]!, name: head[4]!, rssKb: 0 });
    const r = /^Rss:\s+(\d+) kB/.exec(line);
    if (r) maps[maps.length - 1]!.rssKb = Number(r[1]);
  }
  const out: Record<string, number> = { wasm: 0, arenas: 0, brk: 0, files: 0, anon: 0 };
  const ARENA = 64n * 1024n * 1024n;
  let arenaBase = -1n;
  maps.forEach((m, i) => {
    const next = maps[i + 1];
    let kind = 'anon';
    if (m.name === '[heap]') kind = 'brk';
    else if (m.name.startsWith('/')) kind = 'files';
    else if (m.name) kind = 'anon';
    else if (m.perms.startsWith('rw') && next && next.start === m.end && next.perms.startsWith('---') && next.end - next.start >= 4n * 1024n ** 3n) kind = 'wasm';
    else if (m.start % ARENA === 0n && m.end - m.start <= ARENA) {
      kind = 'arenas';
      arenaBase = m.start;
    } else if (arenaBase >= 0n && m.start > arenaBase && m.end <= arenaBase + ARENA) kind = 'arenas';
    out[kind]! += m.rssKb / 1024;
  });
  return out;
}

/** A snapshot of the whole process: RSS, its mappings by kind, the prefix cache (from /metrics), and each thread. */
export interface Snapshot {
  rssMb: number;
  hwmMb: number;
  smaps: Record<string, number>;
  /** The prefix cache's bytes (hearth_kv_cache_bytes, all models), MiB. */
  kvCacheMb: number;
  threads: Record<string, Thread>;
}

/** The inspector of a server whose output holds its "Debugger listening on ws://…" line, with worker sessions on. */
export async function connectInspector(output: string): Promise<Inspector> {
  const wsUrl = /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
  if (!wsUrl) throw new Error(`no inspector URL in the server's output:\n${output}`);
  const inspector = await Inspector.connect(wsUrl);
  await inspector.send('NodeWorker.enable', { waitForDebuggerOnStart: false });
  return inspector;
}

/** What a worker is: the engine (its workerData names a device), tsx's loader-hooks thread (run from source), or a grammar trial. */
async function label(inspector: Inspector, session: string, title: string): Promise<string> {
  if (title.includes('main.js')) return 'hooks';
  const r = (await inspector.send('Runtime.evaluate', { expression: "Object.keys(process.getBuiltinModule('node:worker_threads').workerData ?? {}).join()", returnByValue: true }, session)) as { result: { value: string } };
  return r.result.value.includes('device') ? 'engine' : 'trial';
}

/** `gc: false` leaves the heaps as they are (garbage included): what RSS sees between collections. */
export async function snapshot(pid: number, url: string, inspector: Inspector, opts: { gc?: boolean } = {}): Promise<Snapshot> {
  const threads: Snapshot['threads'] = { main: await inspector.thread(undefined, opts.gc) };
  for (const [session, title] of inspector.workers) {
    const kind = await label(inspector, session, title).catch(() => 'gone');
    let name = kind;
    for (let k = 2; threads[name]; k++) name = `${kind}${k}`;
    threads[name] = await inspector.thread(session, opts.gc).catch(() => ({ heapMb: NaN, heapTotalMb: NaN, externalMb: NaN, wasmCount: NaN, wasmMb: NaN }));
  }
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const kvCacheMb = [...metrics.matchAll(/^hearth_kv_cache_bytes\{[^}]*\} (\S+)$/gm)].reduce((a, m) => a + Number(m[1]), 0) / MB;
  return { ...rss(pid), smaps: smaps(pid), kvCacheMb, threads };
}

/** One line: RSS, mappings by kind, the prefix cache, and each thread's heap, off-heap memory and WASM memories. */
export function describe(s: Snapshot): string {
  const t = Object.entries(s.threads).map(([k, v]) => `${k} heap ${v.heapMb.toFixed(1)}/${v.heapTotalMb.toFixed(0)} ext ${v.externalMb.toFixed(1)} wasm ${v.wasmCount}×=${v.wasmMb.toFixed(0)}`).join(' | ');
  const m = Object.entries(s.smaps).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(' ');
  return `RSS ${s.rssMb.toFixed(0)} (peak ${s.hwmMb.toFixed(0)}) prefix cache ${s.kvCacheMb.toFixed(0)}  [${m}]  ${t}`;
}
