// Which process holds a hold, and whether it still runs (Node only: the file and redis
// stores). A hold whose holder died mid-request settles to what its stream delivered.
import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomBase62 } from './keys.js';
import type { HolderProcess } from './state.js';

/** The machine, and on Linux its pid namespace: containers that share a host name (host
 * networking) but not their pids must not judge each other's holds. */
const HOST = os.hostname() + pidNamespace();
/** This process, apart from its pid (which the next one may get again). */
const PROCESS_ID = randomBase62(12);

export function thisHolder(): Required<HolderProcess> {
  return { pid: process.pid, host: HOST, proc: PROCESS_ID };
}

/** A holder on this machine that no longer runs. A pid seen on another machine (a shared
 * disk, a shared redis) says nothing here: such a hold settles when its lease runs out. */
export function holderGone(h: HolderProcess): boolean {
  if (h.pid === undefined || (h.host !== undefined && h.host !== HOST)) return false;
  if (h.pid === process.pid) return h.proc !== undefined && h.proc !== PROCESS_ID; // a restart that got the same pid
  return !processAlive(h.pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function pidNamespace(): string {
  try {
    return ` ${fs.readlinkSync('/proc/self/ns/pid')}`;
  } catch {
    return ''; // not Linux: the host name alone
  }
}
