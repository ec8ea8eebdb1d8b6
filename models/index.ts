// The fixture model builder: writeFixtures() and where the fixtures live.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fixturesDir } from '../src/paths.js';
import { EXPORT_FIXTURES } from './exports/fixtures.js';
import { FIXTURE_BUILDERS, RERANK_FIXTURES, writeFixtureFolder } from './fixtures.js';

/** Where the fixtures are written: models/fixtures in a checkout, the cache folder once installed. */
export const FIXTURES_DIR = fixturesDir();

export type Preset = 'default' | 'bench' | 'exports';

export const PRESET_FIXTURES: Record<Preset, string[]> = {
  default: ['tiny-chat', 'tiny-embed', 'tiny-rerank', 'tiny-whisper'],
  bench: ['tiny-chat', 'tiny-embed', 'bench-chat', 'bench-chat-q4-b32', 'bench-chat-q4-b32-acc4', 'bench-chat-genai'],
  /** Real tokenizers and export interfaces (parity tests against transformers.js). */
  exports: ['tiny-chat', 'tiny-embed', 'tiny-rerank', 'tiny-whisper', ...EXPORT_FIXTURES, ...RERANK_FIXTURES, 'smolvlm-export', 'qwen2vl-export', 'qwen25vl-export'],
};

export interface WriteFixturesOptions {
  outDir?: string;
  preset?: Preset;
  /** Skip fixtures whose folder already exists. */
  ifMissing?: boolean;
}

/** Writes the preset's fixtures; returns the names written. */
export async function writeFixtures(options: WriteFixturesOptions = {}): Promise<string[]> {
  const outDir = options.outDir ?? FIXTURES_DIR;
  const written: string[] = [];
  for (const name of PRESET_FIXTURES[options.preset ?? 'default']) {
    if (options.ifMissing && existsSync(join(outDir, name))) continue;
    writeFixtureFolder(outDir, name, FIXTURE_BUILDERS[name]!(), !options.ifMissing);
    written.push(name);
  }
  return written;
}

export { SEED, tinyChat, tinyEmbed, benchChat, fixtureTokenizer } from './fixtures.js';
