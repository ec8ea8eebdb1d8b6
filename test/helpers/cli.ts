// The `hearth` command as users run it: the package's bin (bin/hearth.js), which runs the build
// in dist/. A server started so is listening in about 0.6 s, against 1.5–1.9 s through tsx from
// source, and the suite starts a few hundred. The build is current: npm test's pretest writes it,
// and test/global-setup.ts brings it up to date when vitest is run without npm.
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '../..');

/** node's arguments that run the hearth command; the command's own follow. */
export const CLI = [join(ROOT, 'bin/hearth.js')];
