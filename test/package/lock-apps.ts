// `npm run test:apps:lock`: writes each temporary app's package-lock.json (with the
// registry reachable), so the package tests install exactly these versions from npm's
// cache. Run it after changing Hearth's dependencies or an app's package.json.
import { cpSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { APPS, copyApp, packHearth, run, type AppName } from './apps.js';

const tarball = await packHearth();
for (const name of readdirSync(APPS) as AppName[]) {
  const dir = copyApp(name, tarball);
  const r = await run('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir });
  if (r.code !== 0) throw new Error(`npm install in ${dir} failed:\n${r.stderr}`);
  cpSync(join(dir, 'package-lock.json'), join(APPS, name, 'package-lock.json'));
  console.log(`wrote test/package/apps/${name}/package-lock.json`);
}
