// `npm run test:apps:lock`: writes each temporary app's package-lock.json (with the
// registry reachable), so the package tests install exactly these versions from npm's
// cache. Run it after changing Hearth's dependencies or an app's package.json.
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { APPS, copyApp, packHearth, run, type AppName } from './apps.js';

const tarball = await packHearth();
for (const name of readdirSync(APPS) as AppName[]) {
  const dir = copyApp(name, tarball);
  // Hearth's own entry goes, so npm resolves its dependencies anew from the tarball (a lock keeps
  // a file: package's old ones); every other package keeps its locked version.
  const lockFile = join(dir, 'package-lock.json');
  const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, unknown> };
  delete lock.packages['node_modules/hearth'];
  writeFileSync(lockFile, JSON.stringify(lock, null, 2));
  const r = await run('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir });
  if (r.code !== 0) throw new Error(`npm install in ${dir} failed:\n${r.stderr}`);
  cpSync(join(dir, 'package-lock.json'), join(APPS, name, 'package-lock.json'));
  console.log(`wrote test/package/apps/${name}/package-lock.json`);
}
