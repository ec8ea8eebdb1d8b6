// Puts every package the temporary apps install (test/package/apps/*/package-lock.json)
// into npm's cache, so `npm test` installs them offline. Needs the registry: .ci/run
// calls it before the tests. Only this machine's platform's optional binaries are fetched.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const apps = join(dirname(fileURLToPath(import.meta.url)), 'apps');
const fits = (list, value) => !list || list.some((v) => v === value || (v.startsWith('!') ? v.slice(1) !== value : false));
const libc = process.report?.getReport().header.glibcVersionRuntime ? 'glibc' : 'musl';

const specs = new Set();
for (const app of readdirSync(apps)) {
  const file = join(apps, app, 'package-lock.json');
  if (!existsSync(file)) continue;
  const { packages } = JSON.parse(readFileSync(file, 'utf8'));
  for (const [path, p] of Object.entries(packages)) {
    if (!path || p.link || !p.version || String(p.resolved ?? '').startsWith('file:')) continue;
    if (!fits(p.os, process.platform) || !fits(p.cpu, process.arch) || !fits(p.libc, libc)) continue;
    const name = p.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    specs.add(`${name}@${p.version}`);
  }
}
const list = [...specs];
for (let i = 0; i < list.length; i += 50) {
  execFileSync('npm', ['cache', 'add', ...list.slice(i, i + 50)], { stdio: ['ignore', 'ignore', 'inherit'] });
}
console.log(`npm's cache holds the ${list.length} packages the temporary apps install`);
