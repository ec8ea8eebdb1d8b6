import { describe, expect, it } from 'vitest';
import { SERVE_HELP, serveOptions } from '../../src/cli/commands/serve.js';
import type { Io } from '../../src/cli/io.js';

const io = (): Io => ({ out: () => {}, err: () => {} });

describe('hearth serve audio flags', () => {
  it('take --max-audio-bytes and --max-audio-seconds as whole numbers of at least 1, refusing others by name', () => {
    expect(serveOptions(['--max-audio-bytes', '1048576', '--max-audio-seconds', '600'], io())).toMatchObject({ maxAudioBytes: 1_048_576, maxAudioSeconds: 600 });
    for (const flag of ['--max-audio-bytes', '--max-audio-seconds']) {
      for (const bad of ['0', '-1', '2.5', 'x']) expect(() => serveOptions([flag, bad], io())).toThrow(flag);
    }
  });

  it('leave the defaults to the router when absent, and list both flags with their defaults in the help', () => {
    const o = serveOptions([], io())!;
    expect(o.maxAudioBytes).toBeUndefined();
    expect(o.maxAudioSeconds).toBeUndefined();
    expect(SERVE_HELP).toMatch(/--max-audio-bytes N .*default 26214400/s);
    expect(SERVE_HELP).toMatch(/--max-audio-seconds N .*default 3600/s);
  });
});
