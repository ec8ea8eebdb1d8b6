// Ollama's keep_alive, read the way Ollama reads it: a number is seconds, a string a Go-style
// duration ("30s", "5m", "1h30m", "250ms"); 0 unloads when the request ends, any negative value
// keeps the model forever. Shared by the router (a request's keep_alive) and the CLI
// (--keep-alive), so both accept exactly the same values.

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?|\.\d+)(ns|us|µs|ms|s|m|h)/g;
const DURATION = /^[+-]?((\d+(\.\d+)?|\.\d+)(ns|us|µs|ms|s|m|h))+$/;

/** Milliseconds (rounded up), -1 for "forever", or null where the value is not a keep-alive. */
export function parseKeepAlive(v: unknown): number | null {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return null;
    return v < 0 ? -1 : Math.ceil(v * 1000);
  }
  if (typeof v !== 'string') return null;
  const s = v.trim();
  // A plain number in a string: seconds, as the CLI's "--keep-alive 300" and Ollama's OLLAMA_KEEP_ALIVE take it.
  if (/^[+-]?(\d+(\.\d+)?|\.\d+)$/.test(s)) return parseKeepAlive(Number(s));
  if (!DURATION.test(s)) return null;
  if (s.startsWith('-')) return -1;
  let ms = 0;
  for (const [, n, unit] of s.matchAll(PART)) ms += Number(n) * UNIT_MS[unit!]!;
  return Math.ceil(ms);
}

/** A keep-alive for people: "forever", "0s", "5m", "1h30m", "45s". */
export function formatKeepAlive(ms: number): string {
  if (ms < 0) return 'forever';
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return [h ? `${h}h` : '', m ? `${m}m` : '', s || (!h && !m) ? `${s}s` : ''].join('');
}
