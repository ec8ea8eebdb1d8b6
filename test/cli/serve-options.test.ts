import { describe, expect, it } from 'vitest';
import { serveOptions } from '../../src/cli/commands/serve.js';
import type { Io } from '../../src/cli/io.js';

const io = (): Io & { lines: string[] } => {
  const lines: string[] = [];
  return { lines, out: (t) => lines.push(t), err: (t) => lines.push(t) };
};

describe('hearth serve flags', () => {
  it('map onto ServeOptions', () => {
    const o = serveOptions(
      [
        '--host', '0.0.0.0', '--port', '0', '--data-dir', 'd', '--catalog', 'c.json', '--models', 'svc/a, svc/b',
        '--device', 'cuda', '--rate-limit', '10', '--sandbox-cap-usd', '2.5', '--max-body-bytes', '2048', '--store', 'memory',
        '--threads', '1',
      ],
      io(),
    )!;
    const { log, ...rest } = o;
    expect(typeof log).toBe('function');
    expect(rest).toEqual({
      host: '0.0.0.0',
      port: 0,
      dataDir: 'd',
      catalog: 'c.json',
      models: ['svc/a', 'svc/b'],
      device: 'cuda',
      rateLimit: 10,
      sandboxCapUsd: 2.5,
      maxBodyBytes: 2048,
      store: 'memory',
      threads: 1,
    });
  });

  it('take the request limits: embedding inputs, embedding tokens and generations, each a whole number of at least 1', () => {
    const o = serveOptions(['--max-embedding-inputs', '100', '--max-embedding-tokens', '5000', '--max-generations', '16'], io())!;
    expect(o).toMatchObject({ maxEmbeddingInputs: 100, maxEmbeddingTokens: 5000, maxGenerations: 16 });
    for (const flag of ['--max-embedding-inputs', '--max-embedding-tokens', '--max-generations']) {
      for (const bad of ['0', '-1', '2.5', 'x']) expect(() => serveOptions([flag, bad], io())).toThrow(flag);
    }
  });

  it('take --speculative off, ngram or draft, and refuse anything else naming the choices', () => {
    expect(serveOptions(['--speculative', 'off'], io())).toMatchObject({ speculative: 'off' });
    expect(serveOptions(['--speculative', 'ngram'], io())).toMatchObject({ speculative: 'ngram' });
    expect(serveOptions(['--speculative', 'draft'], io())).toMatchObject({ speculative: 'draft' });
    expect(serveOptions([], io())!.speculative).toBeUndefined();
    expect(() => serveOptions(['--speculative', 'eagle'], io())).toThrow('--speculative must be one of off, ngram, draft (got "eagle")');
  });

  it('refuse a thread count that is not a whole number of at least 1, naming the flag', () => {
    for (const bad of ['0', '-2', '1.5', 'many']) expect(() => serveOptions(['--threads', bad], io())).toThrow(/--threads/);
  });

  it('leave defaults to serve() when flags are absent, and route log lines to stdout', () => {
    const out = io();
    const o = serveOptions([], out)!;
    expect(Object.keys(o)).toEqual(['log']);
    o.log!('Hearth listening on http://127.0.0.1:8080');
    expect(out.lines).toEqual(['Hearth listening on http://127.0.0.1:8080']);
  });

  it('take the stored responses’ retention: per account, and an age in days', () => {
    const o = serveOptions(['--responses-per-account', '50', '--responses-max-age-days', '0.5'], io())!;
    expect(o.responseRetention).toEqual({ perAccount: 50, maxAgeMs: 43_200_000 });
    expect(() => serveOptions(['--responses-per-account', '0'], io())).toThrow(/--responses-per-account/);
    expect(() => serveOptions(['--responses-max-age-days', '0'], io())).toThrow(/--responses-max-age-days/);
  });

  it('prints help and returns null for --help', () => {
    const out = io();
    expect(serveOptions(['--help'], out)).toBeNull();
    expect(out.lines[0]).toMatch(/Usage: hearth serve/);
  });

  it.each([
    [['--port', '-1']],
    [['--port', '1.5']],
    [['--rate-limit', '0']],
    [['--sandbox-cap-usd', '-1']],
    [['--max-body-bytes', 'big']],
    [['--models', ',']],
    [['--device', 'wasm']],
  ])('refuses %j', (args) => {
    expect(() => serveOptions(args, io())).toThrow(expect.objectContaining({ exitCode: 2 }));
  });
});
