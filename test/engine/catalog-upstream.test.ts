// Catalog entries with an `upstream` instead of a `source`: parsed, checked, and
// told apart from local ones.
import { describe, expect, it } from 'vitest';
import { parseCatalog } from '../../src/engine/catalog.js';

const entry = (extra: Record<string, unknown>) =>
  JSON.stringify({ models: [{ id: 'svc/big', task: 'chat', class: '70B', context_length: 131072, price: { input_per_1m: 0.6, output_per_1m: 0.8 }, ...extra }] });
const resolve = (s: string) => `/abs/${s}`;

describe('catalog upstream entries', () => {
  it('parse with their upstream, a descriptive source and no file path resolved', () => {
    const [e] = parseCatalog(entry({ upstream: { urls: ['http://10.0.0.5:8000/v1'], model: 'meta-llama/Llama-3.3-70B-Instruct', api_key_env: 'UPSTREAM_KEY' } }), resolve);
    expect(e!.upstream).toEqual({ urls: ['http://10.0.0.5:8000/v1'], model: 'meta-llama/Llama-3.3-70B-Instruct', api_key_env: 'UPSTREAM_KEY' });
    expect(e!.source).toBe('upstream:meta-llama/Llama-3.3-70B-Instruct');
  });

  it('refuse an entry with neither a source nor an upstream, naming source', () => {
    expect(() => parseCatalog(entry({}), resolve)).toThrow(/source/);
  });

  it('refuse URLs that are not http(s) and key variables that are not variable names', () => {
    expect(() => parseCatalog(entry({ upstream: { urls: ['ftp://x/v1'], model: 'm' } }), resolve)).toThrow();
    expect(() => parseCatalog(entry({ upstream: { urls: ['http://x/v1'], model: 'm', api_key_env: 'sk-not-a-name' } }), resolve)).toThrow(/environment variable/);
  });
});
