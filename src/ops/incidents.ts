// Announced incidents: `<dataDir>/incidents.jsonl`, one JSON object per line
// ({at, text}), appended by `hearth incident add "text"` and shown on /status.
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Announcement } from '../types.js';

export const INCIDENTS_FILE = 'incidents.jsonl';
export const incidentsPath = (dataDir: string) => join(dataDir, INCIDENTS_FILE);

export async function appendIncident(dataDir: string, text: string, at = new Date()): Promise<Announcement> {
  const clean = text.replace(/\s+/g, ' ').trim();
  if (!clean) throw new Error('an incident needs some text');
  const a: Announcement = { at: at.toISOString(), text: clean };
  await mkdir(dataDir, { recursive: true });
  // One write of one line: appends from several processes do not interleave within it.
  await appendFile(incidentsPath(dataDir), JSON.stringify(a) + '\n', { mode: 0o600 });
  return a;
}

/** The newest `limit` announcements first; malformed lines (a torn last write) are skipped. */
export async function readIncidents(dataDir: string, limit = 20): Promise<Announcement[]> {
  const file = incidentsPath(dataDir);
  if (!existsSync(file)) return [];
  const out: Announcement[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as Partial<Announcement>;
      if (typeof v.at === 'string' && typeof v.text === 'string') out.push({ at: v.at, text: v.text });
    } catch {
      // skip
    }
  }
  return out.reverse().slice(0, limit);
}
