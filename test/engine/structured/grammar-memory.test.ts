// XGrammar's WASM heap never shrinks, and nothing in it is garbage-collected: what a compiled
// grammar leaves there stays until it is freed by hand. A model keeps 64 compiled grammars
// (the least recently used goes first); a stream of distinct grammars past that must leave
// the heap where the first 64 left it (issue 26, item 6: it grew by about 55 KB a grammar).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadXGrammarInNode } from '../../../src/backends/node-xgrammar.js';
import type { GrammarSpec } from '../../../src/engine/protocol.js';
import { Grammars } from '../../../src/engine/structured/grammars.js';
import { setXGrammarLoader, xgrammar, xgrammarGeneration } from '../../../src/engine/structured/xgrammar.js';
import { fixtures } from '../../helpers/fixtures.js';

let grammars: Grammars;
let vocab: Record<string, number>;
/** The WASM memory of the XGrammar instance the engine uses here. */
let memory: WebAssembly.Memory | undefined;

beforeAll(async () => {
  // The module instantiates on its first call: catch the memory it exports then.
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = (async (...args: Parameters<typeof instantiate>) => {
    const r = (await (instantiate as (...a: unknown[]) => Promise<unknown>)(...args)) as WebAssembly.WebAssemblyInstantiatedSource | WebAssembly.Instance;
    const instance = 'instance' in r ? r.instance : r;
    for (const v of Object.values(instance.exports)) if (v instanceof WebAssembly.Memory) memory = v;
    return r;
  }) as typeof instantiate;
  try {
    setXGrammarLoader(loadXGrammarInNode);
    await xgrammar();
  } finally {
    WebAssembly.instantiate = instantiate;
  }
  const json = JSON.parse(readFileSync(join(await fixtures(), 'tiny-chat', 'tokenizer.json'), 'utf8'));
  vocab = json.model.vocab;
  grammars = new Grammars(json, 512, [2]);
});

const schema = (i: number): GrammarSpec => ({
  type: 'json_schema',
  schema: JSON.stringify({ type: 'object', properties: { [`k${i}`]: { type: 'integer' }, name: { type: 'string', maxLength: 1 + (i % 30) } }, required: [`k${i}`] }),
  param: 'response_format',
});
const regex = (i: number): GrammarSpec => ({ type: 'regex', pattern: `[A-Z]{3}-[0-9]{1,${6 + i}}x`, param: 'sampling_params.regex' });

/** One structured generation's use of a grammar: a matcher, a few masks, freed. */
async function use(spec: GrammarSpec): Promise<void> {
  const c = await grammars.constraint(spec);
  await c.mask(new Float32Array(512));
  c.dispose();
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

describe("XGrammar's heap under distinct grammars", () => {
  it('stops growing once the cache is full: 600 more distinct grammars add under 2 MiB', async () => {
    expect(memory).toBeInstanceOf(WebAssembly.Memory);
    const gen = xgrammarGeneration();
    // Past the cache (64), so that the heap holds what a full cache needs.
    for (let i = 0; i < 200; i++) await use(i % 2 ? schema(i) : regex(i));
    const warm = memory!.buffer.byteLength;
    for (let i = 200; i < 800; i++) await use(i % 2 ? schema(i) : regex(i));
    const after = memory!.buffer.byteLength;
    console.log(`XGrammar's WASM memory: ${mb(warm)} MiB after 200 distinct grammars, ${mb(after)} MiB after 800`);
    // The same instance throughout (a retired one would make the figures meaningless).
    expect(xgrammarGeneration()).toBe(gen);
    expect(after - warm).toBeLessThan(2 * 2 ** 20);
  }, 180_000);

  it('a matcher outlives its grammar leaving the cache', async () => {
    const spec = schema(100_000);
    const c = await grammars.constraint(spec);
    // 64 others push it out (and free it) while its matcher is still in use.
    for (let i = 0; i < 70; i++) await use(regex(1_000 + i));
    for (const ch of '{\n  "k100000":12') {
      const logits = new Float32Array(512);
      await c.mask(logits);
      const id = vocab[ch === ' ' ? 'Ġ' : ch === '\n' ? 'Ċ' : ch]!;
      expect(logits[id]).toBe(0);
      expect(c.accept(id)).toBe(true);
    }
    c.dispose();
    // And the grammar compiles again when it comes back.
    await use(spec);
  }, 120_000);
});
