// Listening on --host/--port, with failures said in words: Node's listen reports them
// as an 'error' event, which, unheard, kills the process with a stack trace.
import * as net from 'node:net';
import { errnoOf, explainErrno } from './system-errors.js';

/** A listen failure as an Error naming the host or port and the fix. */
export function listenError(err: unknown, host: string, port: number): Error {
  const at = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (errnoOf(err)) {
    case 'EADDRINUSE':
      return new Error(`port ${port} is in use on ${host}: stop the other server, or pass --port 0 for any free port`);
    case 'EACCES':
    case 'EPERM':
      return new Error(`not allowed to listen on ${at}: ports below 1024 need privileges; pass a higher --port (or --port 0)`);
    case 'EADDRNOTAVAIL':
      return new Error(`--host ${host} is not an address of this machine: pass 127.0.0.1, 0.0.0.0 or one of its addresses`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new Error(`--host ${host} does not resolve to an address: pass 127.0.0.1, 0.0.0.0 or a host name of this machine`);
    default:
      return new Error(`cannot listen on ${at}: ${explainErrno(err)}`);
  }
}

/** Resolves once a throwaway listener could bind host:port (then closed); rejects with
 * listenError otherwise. Checked before anything is created, so a taken port fails fast. */
export function checkListen(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err) => reject(listenError(err, host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
