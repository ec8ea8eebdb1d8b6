// Each test file (vitest runs each in its own process) gets a cache folder of its own for
// hub downloads, so no test reads another's files or the user's ~/.cache/hearth. The
// fixtures of this checkout stay in models/fixtures.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.HEARTH_CACHE_DIR = mkdtempSync(join(tmpdir(), 'hearth-cache-'));
