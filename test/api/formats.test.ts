import { describe, expect, test } from 'vitest';
import { formatReset } from '../../src/api/context.js';
import { paramPath } from '../../src/api/errors.js';
import { requestIdFrom } from '../../src/api/ids.js';

describe('small formats the router writes', () => {
  test('reset durations read as OpenAI writes them', () => {
    expect(formatReset(0)).toBe('0s');
    expect(formatReset(17)).toBe('17ms');
    expect(formatReset(1000)).toBe('1s');
    expect(formatReset(1200)).toBe('2s');
    expect(formatReset(360_000)).toBe('6m0s');
    expect(formatReset(3_723_000)).toBe('1h2m3s');
  });

  test('param paths read like messages[0].content and stream_options.include_usage', () => {
    expect(paramPath(['messages', 0, 'content'])).toBe('messages[0].content');
    expect(paramPath(['stream_options', 'include_usage'])).toBe('stream_options.include_usage');
    expect(paramPath(['messages', 1, 'content', 2, 'type'])).toBe('messages[1].content[2].type');
  });

  test('request ids are echoed only when they are sane', () => {
    expect(requestIdFrom('abc-123')).toBe('abc-123');
    expect(requestIdFrom('x'.repeat(129))).toMatch(/^req_/);
    expect(requestIdFrom('a\r\nb')).toMatch(/^req_/);
    expect(requestIdFrom(null)).toMatch(/^req_[A-Za-z0-9]{24}$/);
  });
});
