// Where an installed Hearth writes: HEARTH_CACHE_DIR, else $XDG_CACHE_HOME/hearth, else ~/.cache/hearth.
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cacheDir, hubCacheDir } from '../src/paths.js';

describe('the cache folder', () => {
  it('is HEARTH_CACHE_DIR when set, resolved', () => {
    expect(cacheDir({ HEARTH_CACHE_DIR: 'rel/cache', XDG_CACHE_HOME: '/xdg' })).toBe(resolve('rel/cache'));
  });

  it('is $XDG_CACHE_HOME/hearth without HEARTH_CACHE_DIR', () => {
    expect(cacheDir({ XDG_CACHE_HOME: '/xdg' })).toBe(join('/xdg', 'hearth'));
  });

  it('is ~/.cache/hearth with neither set', () => {
    expect(cacheDir({})).toBe(join(homedir(), '.cache', 'hearth'));
  });

  it('holds hub downloads in hub/', () => {
    expect(hubCacheDir()).toBe(join(cacheDir(), 'hub'));
  });
});
