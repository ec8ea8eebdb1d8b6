// The memory benchmarks' view of a server: the resident memory of every process in its group.
import { readdirSync, readFileSync } from 'node:fs';

/** VmRSS summed over the processes of group `pgid`, in bytes, from /proc. */
export function groupRssBytes(pgid: number): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      // Field 5 of stat is the process group; the command name (field 2) may hold spaces, so count from its ')'.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // the process ended between the listing and the read
    }
  }
  return total;
}
