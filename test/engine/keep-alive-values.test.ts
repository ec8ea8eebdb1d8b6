// keep_alive values as Ollama reads them: a number is seconds, a string a Go duration, 0 unloads
// when the request ends, anything negative keeps the model; anything else is not a keep-alive.
import { describe, expect, it } from 'vitest';
import { formatKeepAlive, parseKeepAlive } from '../../src/engine/keep-alive.js';

describe('keep-alive values', () => {
  it('reads durations, seconds, 0 and negatives as Ollama does', () => {
    expect(parseKeepAlive('30s')).toBe(30_000);
    expect(parseKeepAlive('5m')).toBe(300_000);
    expect(parseKeepAlive('1h')).toBe(3_600_000);
    expect(parseKeepAlive('1h30m')).toBe(5_400_000);
    expect(parseKeepAlive('250ms')).toBe(250);
    expect(parseKeepAlive('1.5s')).toBe(1500);
    expect(parseKeepAlive(300)).toBe(300_000);
    expect(parseKeepAlive('300')).toBe(300_000);
    expect(parseKeepAlive(0.5)).toBe(500);
    expect(parseKeepAlive(0)).toBe(0);
    expect(parseKeepAlive('0')).toBe(0);
    expect(parseKeepAlive('0s')).toBe(0);
    expect(parseKeepAlive(-1)).toBe(-1);
    expect(parseKeepAlive('-1')).toBe(-1);
    expect(parseKeepAlive('-1m')).toBe(-1);
  });

  it('refuses what is not a keep-alive', () => {
    for (const bad of ['soon', '5 minutes', '5d', '', 'm5', '1h-2m', true, null, {}, [], Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(parseKeepAlive(bad), JSON.stringify(bad)).toBeNull();
    }
  });

  it('writes a keep-alive for people', () => {
    expect(formatKeepAlive(-1)).toBe('forever');
    expect(formatKeepAlive(0)).toBe('0s');
    expect(formatKeepAlive(300_000)).toBe('5m');
    expect(formatKeepAlive(5_430_000)).toBe('1h30m30s');
  });
});
