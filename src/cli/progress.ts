// Download progress in the terminal: one bar per file with bytes and rate
// (cli-progress). Where stderr is not a terminal (logs, CI), one line per file
// when it completes instead of redrawn bars.
import cliProgress from 'cli-progress';
import type { DownloadProgress } from '../engine/protocol.js';

export interface ProgressView {
  update(p: DownloadProgress): void;
  stop(): void;
}

const mb = (n: number) => (n / 1e6).toFixed(1);

function rate(bytes: number, ms: number): string {
  const perS = ms > 0 ? (bytes * 1000) / ms : 0;
  if (perS >= 1e6) return `${(perS / 1e6).toFixed(1)} MB/s`;
  return `${(perS / 1e3).toFixed(0)} kB/s`;
}

export function downloadBars(stream: NodeJS.WriteStream = process.stderr): ProgressView {
  const tty = Boolean(stream.isTTY);
  const multi = tty
    ? new cliProgress.MultiBar(
        {
          stream,
          format: ' {file} |{bar}| {percentage}% | {loaded}/{size} MB | {rate}',
          hideCursor: true,
          clearOnComplete: false,
          stopOnComplete: false,
          barsize: 30,
        },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  const files = new Map<string, { bar?: cliProgress.SingleBar; start: number; loaded: number; total: number; done: boolean }>();
  return {
    update(p) {
      let f = files.get(p.file);
      if (!f) {
        f = { start: Date.now(), loaded: 0, total: 0, done: false };
        files.set(p.file, f);
      }
      if (f.done) return;
      if (p.done && !f.loaded && !p.loaded) {
        f.done = true; // already on disk: nothing was fetched
        return;
      }
      if (p.loaded) f.loaded = p.loaded;
      if (p.total) f.total = p.total;
      const size = f.total || f.loaded || 1;
      const payload = { file: p.file.padEnd(24), loaded: mb(f.loaded), size: f.total ? mb(f.total) : '?', rate: rate(f.loaded, Date.now() - f.start) };
      if (multi) {
        f.bar ??= multi.create(size, 0, payload);
        f.bar.setTotal(size);
        f.bar.update(p.done ? size : f.loaded, payload);
      }
      if (p.done) {
        f.done = true;
        if (!multi) stream.write(`downloaded ${p.file}: ${mb(f.loaded)} MB in ${((Date.now() - f.start) / 1000).toFixed(1)} s (${payload.rate})\n`);
      }
    },
    stop() {
      multi?.stop();
    },
  };
}
