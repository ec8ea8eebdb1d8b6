// After the suite: the processes it started that are still running (a server a test spawned
// and never stopped, what that server spawned, a browser). .ci/run exports HEARTH_TEST_RUN,
// a value of its own, before `npm test`; every process started under it inherits it and
// keeps it once orphaned, wherever it was reparented. So they are the processes whose
// environment holds it, less this script and the shell that runs it (its ancestors), and
// less zombies (already exited). Waits a few seconds for the ones still on their way out,
// then names the rest, ends them, and exits 1.
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';

const token = process.env.HEARTH_TEST_RUN;
if (!token) {
  console.error('left-running: HEARTH_TEST_RUN is not set (.ci/run sets it before npm test)');
  process.exit(2);
}
if (!existsSync('/proc/self/environ')) {
  console.log('Left running: not checked (no /proc here)');
  process.exit(0);
}
const marker = `HEARTH_TEST_RUN=${token}`;
const GRACE_MS = 10_000;

const read = (file) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined; // gone meanwhile, or another user's
  }
};

/** state and ppid from /proc/<pid>/stat (its command may hold spaces and parentheses). */
function stat(pid) {
  const s = read(`/proc/${pid}/stat`);
  if (!s) return undefined;
  const [state, ppid] = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return { state, ppid: Number(ppid) };
}

function ancestorsOfThis() {
  const out = new Set();
  for (let pid = process.pid; pid > 0 && !out.has(pid); pid = stat(pid)?.ppid ?? 0) out.add(pid);
  return out;
}

function leftRunning() {
  const mine = ancestorsOfThis();
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (mine.has(pid)) continue;
    const s = stat(pid);
    if (!s || s.state === 'Z') continue;
    if (!read(`/proc/${pid}/environ`)?.split('\0').includes(marker)) continue;
    let cwd = '?';
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {}
    const cmd = (read(`/proc/${pid}/cmdline`) ?? '').split('\0').filter(Boolean).join(' ');
    found.push({ pid, ppid: s.ppid, cwd, cmd });
  }
  return found;
}

let left = leftRunning();
for (const end = Date.now() + GRACE_MS; left.length && Date.now() < end; left = leftRunning()) await new Promise((r) => setTimeout(r, 250));
if (!left.length) {
  console.log('Left running: nothing (every process the suite started has ended)');
  process.exit(0);
}
console.error(`Left running after the suite: ${left.length} process${left.length === 1 ? '' : 'es'} it started (now ended):`);
for (const p of left) console.error(`  pid ${p.pid} (parent ${p.ppid}) in ${p.cwd}: ${p.cmd.slice(0, 300)}`);
for (const p of left) {
  try {
    process.kill(p.pid, 'SIGKILL');
  } catch {}
}
process.exit(1);
