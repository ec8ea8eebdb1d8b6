// Tests run the hearth command as users do, from the build in dist/ (helpers/cli.ts), so before
// any test file runs the build is brought up to date with its source: a test file run alone
// after an edit must not run the code from before it. tsc's incremental build takes about 4 s
// when nothing changed. Under npm (`npm test`) the pretest script has just built it.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

let built = false;

export default function setup(): void {
  if (built || process.env.npm_lifecycle_event === 'test') return;
  built = true; // once a run, though each project of vite.config.ts inherits this setup
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: join(import.meta.dirname, '..'), stdio: 'inherit' });
}
