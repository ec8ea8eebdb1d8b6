// A raw HTTP/1.1 client for tests that send what fetch() cannot: duplicate headers, lying
// lengths, slow and cut uploads, CONNECT, odd request targets and Host headers.
import * as net from 'node:net';

const TIMEOUT_MS = 30_000; // a hang fails the request

export type Piece = string | Uint8Array | { delayMs: number };

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes the pieces, then reads until the server closes. `abort`: destroy the socket
 * after writing (an aborted upload), expecting nothing. */
export function rawExchange(port: number, pieces: Piece[], opts: { abort?: boolean } = {}): Promise<RawAnswer[] | 'aborted'> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      sock.destroy();
      reject(new Error(`raw request hung for ${TIMEOUT_MS} ms`));
    }, TIMEOUT_MS);
    sock.on('data', (d) => chunks.push(d));
    sock.on('error', () => {}); // a reset after the answer is fine; judged on close
    sock.on('close', () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (opts.abort) return resolve('aborted');
      try {
        resolve(parseAnswers(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    });
    sock.on('connect', async () => {
      for (const p of pieces) {
        if (sock.destroyed) return;
        if (typeof p === 'object' && 'delayMs' in p) await new Promise((r) => setTimeout(r, p.delayMs));
        else sock.write(p);
      }
      if (opts.abort) sock.destroy();
    });
  });
}

export function parseAnswers(buf: Buffer): RawAnswer[] {
  const out: RawAnswer[] = [];
  let at = 0;
  while (at < buf.length) {
    const end = buf.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`a truncated answer: ${JSON.stringify(buf.subarray(at, at + 200).toString())}`);
    const head = buf.subarray(at, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0]!);
    if (!m) throw new Error(`not an HTTP answer: ${JSON.stringify(head[0])}`);
    if (m[1]!.startsWith('1')) {
      at = end + 4; // an interim answer (100 Continue): no body
      continue;
    }
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const c = line.indexOf(':');
      headers[line.slice(0, c).trim().toLowerCase()] = line.slice(c + 1).trim();
    }
    let p = end + 4;
    let body: Buffer;
    if (headers['transfer-encoding']?.includes('chunked')) {
      const parts: Buffer[] = [];
      for (;;) {
        const le = buf.indexOf('\r\n', p);
        if (le < 0) break;
        const size = parseInt(buf.subarray(p, le).toString(), 16);
        p = le + 2;
        if (!size) {
          p += 2;
          break;
        }
        parts.push(buf.subarray(p, p + size));
        p += size + 2;
      }
      body = Buffer.concat(parts);
    } else if (headers['content-length'] !== undefined) {
      const n = Number(headers['content-length']);
      body = buf.subarray(p, p + n);
      p += n;
    } else {
      body = buf.subarray(p);
      p = buf.length;
    }
    out.push({ status: Number(m[1]), headers, body: body.toString('utf8') });
    at = p;
  }
  return out;
}

