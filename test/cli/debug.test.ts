// A stack trace only on request: --debug anywhere on the command line, or DEBUG=hearth.
// Runs the built command (bin/hearth.js; `npm test` builds it first).
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, expect, it } from 'vitest';

const BIN = path.resolve(import.meta.dirname, '../../bin/hearth.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-debug-'));
const file = path.join(dir, 'a-file');
fs.writeFileSync(file, '');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const hearth = (args: string[], env: Record<string, string> = {}) =>
  new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, DEBUG: '', ...env }, timeout: 30_000 }, (err, _stdout, stderr) =>
      resolve({ code: typeof err?.code === 'number' ? err.code : 0, stderr }),
    );
  });

const LINE = `hearth: --data-dir ${file} is a file, not a folder: pass a folder (it is created if missing)`;
const FRAME = /^\s+at prepareDataDir \(/m;

it('without --debug: the one line, no stack', async () => {
  const r = await hearth(['keys', 'create', '--data-dir', file]);
  expect(r.code).toBe(1);
  expect(r.stderr).toBe(`${LINE}\n`);
});

it.each<[string, string[], Record<string, string>]>([
  ['--debug before the command', ['--debug', 'keys', 'create', '--data-dir', file], {}],
  ['--debug after it', ['keys', 'create', '--data-dir', file, '--debug'], {}],
  ['DEBUG=hearth', ['keys', 'create', '--data-dir', file], { DEBUG: 'hearth' }],
  ['DEBUG=express,hearth*', ['keys', 'create', '--data-dir', file], { DEBUG: 'express,hearth*' }],
])('with %s: the same line first, then the stack', async (_, args, env) => {
  const r = await hearth(args, env);
  expect(r.code).toBe(1);
  expect(r.stderr.split('\n')[0]).toBe(LINE);
  expect(r.stderr).toMatch(FRAME);
});
