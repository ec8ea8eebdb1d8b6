// What a test starts through npx (`hearth serve`, `vite`, `vite preview`) runs as npx's
// child: npx, sent SIGTERM, exits without it, and the server runs on, orphaned. So such a
// command is spawned with `detached: true` (a process group of its own, led by npx) and
// stopped here with its whole group. What is still running when the test process exits is
// killed then (a group is out of reach of the terminal's Ctrl-C).
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether a live process of the group is left. On Linux, from /proc: a member that has
 * exited but is not yet reaped (a zombie, whose parent may be an init that never reaps)
 * does not count. Elsewhere, kill with signal 0, which only asks. */
function groupAlive(pgid: number): boolean {
  if (existsSync('/proc/self/stat')) {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        continue; // gone meanwhile
      }
      // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so read after its last ')'.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') return true;
    }
    return false;
  }
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // already gone
  }
}

/**
 * SIGTERM to the group of a child spawned with `detached: true`, SIGKILL to whatever of it
 * is left after `graceMs`; resolves with the child's exit code (null when a signal ended
 * it) once no process of the group is left.
 */
export async function stopGroup(child: ChildProcess, graceMs = 5_000): Promise<number | null> {
  const pgid = child.pid;
  if (pgid === undefined) return child.exitCode;
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));
  signalGroup(pgid, 'SIGTERM');
  for (const end = Date.now() + graceMs; groupAlive(pgid) && Date.now() < end; ) await sleep(50);
  if (groupAlive(pgid)) signalGroup(pgid, 'SIGKILL');
  for (const end = Date.now() + 5_000; groupAlive(pgid) && Date.now() < end; ) await sleep(20);
  await exited;
  return child.exitCode;
}

/** SIGKILL to what is left of a finished command's group (a server it started and left running). */
export function killGroup(child: ChildProcess): void {
  if (child.pid !== undefined && groupAlive(child.pid)) signalGroup(child.pid, 'SIGKILL');
}

const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of started) killGroup(child);
});

/** `spawn` in a process group of its own, led by the child, to be ended with stopGroup or killGroup. */
export function spawnGroup(cmd: string, args: string[], opts: SpawnOptions): ChildProcess {
  const child = spawn(cmd, args, { ...opts, detached: true });
  started.add(child);
  return child;
}
