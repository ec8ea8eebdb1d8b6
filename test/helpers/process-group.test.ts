// The helper that stops what a test started through npx (hearth serve, vite): a command's
// own children, which outlive it when only it is signalled, are stopped with it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { killGroup, spawnGroup, stopGroup } from './process-group.js';

/** Running (not exited, not a zombie waiting for a parent to reap it). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A shell that starts a `sleep` in the background, says its pid, then waits. */
async function shellWithChild() {
  const shell = spawnGroup('sh', ['-c', 'sleep 300 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const child = await new Promise<number>((resolve) => shell.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
  expect(running(child)).toBe(true);
  return { shell, child };
}

describe.skipIf(process.platform !== 'linux')('a process group a test started', () => {
  it('is stopped whole by stopGroup: the command and the child it left in the background', async () => {
    const { shell, child } = await shellWithChild();
    await stopGroup(shell);
    expect(running(shell.pid!)).toBe(false);
    expect(running(child)).toBe(false);
  });

  it('keeps running the child when only the command is signalled, which is why the group is', async () => {
    const { shell, child } = await shellWithChild();
    await new Promise((resolve) => (shell.once('exit', resolve), shell.kill('SIGTERM')));
    expect(running(child)).toBe(true);
    killGroup(shell);
    for (let i = 0; i < 100 && running(child); i++) await new Promise((r) => setTimeout(r, 20));
    expect(running(child)).toBe(false);
  });
});
