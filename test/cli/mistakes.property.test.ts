// Property test of the built `hearth` command (bin/hearth.js; `npm test` builds it first)
// over commands × mistakes a user makes: files and folders, catalogs, model ids, stores,
// URLs, keys, ports, flags. Every run must exit non-zero within 5 s with exactly one
// line, "hearth: …", naming the offending thing; no stack frames; no key or password
// echoed; and nothing left listening.
//
// FUZZ_SEED=<n> replays a run.

import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort, refused } from '../helpers/ports.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/hearth.js');
const LIMIT_MS = 5_000;
const RUNS = 40;
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : undefined;

interface Case {
  what: string;
  args: string[];
  /** Each must appear in the line. */
  named: string[];
  /** None may appear anywhere in the output. */
  secrets?: string[];
  /** `serve` is given a free port (for PORT in args): nothing may listen there afterwards. */
  port?: boolean;
}

let dir: string;
let aFile: string;
let blocker: net.Server;
let takenPort: number;
let closedPort: number;
const catalogs = { missing: '', notJson: '', entryMissingTask: '' };

beforeAll(async () => {
  if (!fs.existsSync(path.join(ROOT, 'dist/src/cli/main.js'))) throw new Error('run "npm run build" first (npm test does)');
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hearth-mistakes-'));
  aFile = path.join(dir, 'a-file');
  fs.writeFileSync(aFile, 'not a folder');
  catalogs.missing = path.join(dir, 'no-such-catalog.json');
  catalogs.notJson = path.join(dir, 'not-json.json');
  fs.writeFileSync(catalogs.notJson, '{"models": [');
  catalogs.entryMissingTask = path.join(dir, 'missing-task.json');
  fs.writeFileSync(
    catalogs.entryMissingTask,
    JSON.stringify({ models: [{ id: 'svc/broken', class: '1B', context_length: 4096, source: './x', price: { input_per_1m: 0, output_per_1m: 0 } }] }),
  );
  blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  takenPort = (blocker.address() as net.AddressInfo).port;
  closedPort = await freePort();
});

afterAll(() => {
  blocker?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const word = fc.stringMatching(/^[a-z][a-z0-9]{2,9}$/);
const secret = fc.stringMatching(/^[A-Za-z0-9]{32,40}$/);
const pick = <T>(...xs: T[]) => fc.constantFrom(...xs);

/** `serve` with a free port of its own (PORT), so that the test can see nothing stays listening there. */
const PORT = '<free port>';
const serveWith = (args: string[]) => fc.constant({ args: ['serve', '--port', PORT, ...args], port: true as boolean | undefined });

const FILE_STORE_COMMANDS = [
  ['keys', 'create'],
  ['keys', 'list'],
  ['usage'],
  ['incident', 'add', 'Degraded latency'],
  ['incident', 'list'],
  ['models', 'add', '--id', 'svc/new', '--from', './somewhere'],
  ['models', 'remove', 'svc/tiny-chat'],
  ['models', 'redeploy', 'svc/tiny-chat'],
];
const WRITING_COMMANDS = [
  ['keys', 'create'],
  ['incident', 'add', 'Degraded latency'],
  ['models', 'add', '--id', 'svc/new', '--from', './somewhere'],
  ['models', 'remove', 'svc/tiny-chat'],
];
const REMOTE_COMMANDS = [['models', 'list'], ['models', 'add', '--id', 'svc/new', '--from', './somewhere'], ['models', 'remove', 'svc/tiny-chat'], ['models', 'redeploy', 'svc/tiny-chat']];
const STORE_COMMANDS = [['keys', 'create'], ['keys', 'list'], ['usage']];

const withServe = (cmds: string[][], extra: string[]) =>
  fc.oneof(
    pick(...cmds).map((c) => ({ args: [...c, ...extra] as string[], port: undefined as boolean | undefined })),
    serveWith(extra),
  );

const cases: fc.Arbitrary<Case> = fc.oneof(
  withServe(FILE_STORE_COMMANDS, []).map(({ args, port }) => ({
    what: 'data dir is a file',
    args: [...args, '--data-dir', aFile],
    named: [`--data-dir ${aFile} is a file`],
    port,
  })),
  fc.tuple(withServe(WRITING_COMMANDS, []), word, fc.boolean()).map(([{ args, port }, name, underProc]) => {
    const dataDir = underProc ? `/proc/hearth-${name}` : path.join(aFile, name);
    return { what: 'data dir cannot be created', args: [...args, '--data-dir', dataDir], named: [`--data-dir ${dataDir} cannot be created`], port };
  }),
  fc
    .tuple(
      withServe([['models', 'list'], ['models', 'remove', 'svc/tiny-chat'], ['models', 'redeploy', 'svc/tiny-chat']], []),
      pick<[string, string[]]>(['missing', ['cannot be read', 'ENOENT']], ['notJson', ['not valid JSON']], ['entryMissingTask', ['svc/broken', 'task is missing']]),
    )
    .map(([{ args, port }, [which, words]]) => {
      const file = catalogs[which as keyof typeof catalogs];
      // models list/remove/redeploy check the catalog's entries as serve does.
      return { what: `catalog ${which}`, args: [...args, '--catalog', file, '--data-dir', path.join(dir, 'd')], named: [`--catalog ${file}`, ...words], port };
    }),
  fc.tuple(word, fc.option(serveWith([]), { nil: undefined }), pick('remove', 'redeploy')).map(([name, serveArgs, sub]) => {
    const id = `svc/${name}-unknown`;
    return serveArgs
      ? { what: 'unknown model id', args: [...serveArgs.args, '--models', id, '--store', 'memory'], named: [`--models: ${id} is not in`], port: serveArgs.port }
      : { what: 'unknown model id', args: ['models', sub, id, '--data-dir', path.join(dir, 'd')], named: [`${id} is not in the served catalog`] };
  }),
  fc.tuple(withServe(STORE_COMMANDS, []), secret).map(([{ args, port }, password]) => ({
    what: 'unreachable redis',
    args: [...args, '--store', `redis://:${password}@127.0.0.1:${closedPort}/0`],
    named: [`redis://127.0.0.1:${closedPort}`, 'ECONNREFUSED'],
    secrets: [password],
    port,
  })),
  fc.tuple(pick(...REMOTE_COMMANDS), secret).map(([cmd, s]) => ({
    what: 'unreachable --url',
    args: [...cmd, '--url', `http://127.0.0.1:${closedPort}`, '--key', `svc_live_${s}`],
    named: [`cannot reach --url http://127.0.0.1:${closedPort}`, 'connection refused'],
    secrets: [s],
  })),
  fc.tuple(secret, pick('', 'sk-', 'svc_live_', 'svc_live_x')).map(([s, prefix]) => ({
    what: 'key of the wrong shape',
    args: ['keys', 'revoke', prefix + s.slice(0, prefix === 'svc_live_' ? 20 : undefined), '--data-dir', path.join(dir, 'd')],
    named: ['keys revoke'],
    secrets: [s.slice(0, 20)],
  })),
  secret.map((s) => ({ what: 'a key as a stray argument', args: ['keys', 'list', `svc_live_${s}`], named: ['Unexpected argument'], secrets: [s] })),
  fc.constant(null).map(() => ({ what: 'taken port', args: ['serve', '--port', String(takenPort), '--store', 'memory'], named: [`port ${takenPort} is in use`, '--port 0'] })),
  fc.tuple(withServe([['keys', 'create'], ['usage'], ['models', 'list'], ['incident', 'list']], []), word).map(([{ args, port }, name]) => ({
    what: 'unknown flag',
    args: [...args, `--${name}-typo`],
    named: [`--${name}-typo`],
    port,
  })),
);

interface Run {
  code: number | null;
  killed: boolean;
  stdout: string;
  stderr: string;
}

function hearth(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env: { ...process.env, DEBUG: '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    let killed = false;
    const timer = setTimeout(() => ((killed = true), child.kill('SIGKILL')), LIMIT_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, killed, stdout, stderr });
    });
  });
}

it(
  `every mistake gets one "hearth:" line naming it, a non-zero exit within ${LIMIT_MS / 1000} s, no stack, no secret (${RUNS} runs)`,
  async () => {
    await fc.assert(
      fc.asyncProperty(cases, async (c) => {
        const port = c.port ? await freePort() : undefined;
        const args = c.args.map((a) => (a === PORT ? String(port) : a));
        const r = await hearth(args);
        const output = r.stdout + r.stderr;
        const context = `${c.what}: hearth ${args.join(' ')}\n${output}`;
        expect(r.killed, `still running after ${LIMIT_MS} ms: ${context}`).toBe(false);
        expect(r.code, context).not.toBe(0);
        expect(r.stdout, context).toBe('');
        const lines = r.stderr.trimEnd().split('\n');
        expect(lines, context).toHaveLength(1);
        expect(lines[0], context).toMatch(/^hearth: \S/);
        for (const n of c.named) expect(lines[0], context).toContain(n);
        expect(output, context).not.toMatch(/^\s+at /m);
        for (const s of c.secrets ?? []) expect(output, context).not.toContain(s);
        if (port !== undefined) expect(await refused(port), context).toBe(true);
      }),
      { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
  },
  300_000,
);
