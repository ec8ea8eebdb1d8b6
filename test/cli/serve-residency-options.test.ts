// hearth serve's flags for models on demand, parsed into the server's options: --load,
// --keep-alive, --max-loaded-models, --memory-budget-mb, --load-timeout-s; bad values are usage
// errors naming the flag; --help lists them.
import { describe, expect, it } from 'vitest';
import { SERVE_HELP, serveOptions } from '../../src/cli/commands/serve.js';

const io = { out: () => undefined, err: () => undefined };
const opts = (args: string[]) => serveOptions(args, io)!;

describe('serve residency flags', () => {
  it('parses each flag into the server options', () => {
    expect(opts(['--load', 'on-demand', '--keep-alive', '5m', '--max-loaded-models', '2', '--memory-budget-mb', '4096', '--load-timeout-s', '30'])).toMatchObject({
      load: 'on-demand',
      keepAliveMs: 300_000,
      maxLoadedModels: 2,
      memoryBudgetMb: 4096,
      loadTimeoutMs: 30_000,
    });
    expect(opts(['--keep-alive', '-1']).keepAliveMs).toBe(-1);
    expect(opts(['--keep-alive', '90']).keepAliveMs).toBe(90_000);
    expect(opts([])).not.toHaveProperty('load');
  });

  it('refuses bad values, naming the flag', () => {
    expect(() => opts(['--load', 'lazy'])).toThrow(/--load must be eager or on-demand/);
    expect(() => opts(['--keep-alive', 'soon'])).toThrow(/--keep-alive/);
    expect(() => opts(['--max-loaded-models', '0'])).toThrow(/--max-loaded-models/);
    expect(() => opts(['--memory-budget-mb', 'lots'])).toThrow(/--memory-budget-mb/);
    expect(() => opts(['--load-timeout-s', '-1'])).toThrow(/--load-timeout-s/);
  });

  it('lists the flags and their defaults in --help', () => {
    expect(SERVE_HELP).toMatch(/--load M .*eager \(default/s);
    expect(SERVE_HELP).toMatch(/--keep-alive D .*default -1 with eager, 5m with on-demand/s);
    expect(SERVE_HELP).toMatch(/--max-loaded-models N/);
    expect(SERVE_HELP).toMatch(/--memory-budget-mb M/);
    expect(SERVE_HELP).toMatch(/--load-timeout-s S .*default 120/s);
  });
});
