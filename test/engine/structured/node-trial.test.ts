// Grammar trials in Node: a compile past its budget is refused in about the budget (its worker
// ended mid-WASM), a grammar that crashes XGrammar is refused with XGrammar's reason, and
// neither changes how the next grammar fares.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GrammarSpec } from '../../../src/engine/protocol.js';
import { startNodeGrammarTrial } from '../../../src/engine/structured/node-trial.js';
import { vocabInfo, type VocabInfo } from '../../../src/engine/structured/tokenizer-info.js';
import { TrialRefusal, type GrammarTrial } from '../../../src/engine/structured/trial.js';
import { fixtures } from '../../helpers/fixtures.js';

let vocab: VocabInfo;
let trial: GrammarTrial;
const BUDGET_MS = 300;

beforeAll(async () => {
  vocab = vocabInfo(JSON.parse(readFileSync(join(await fixtures(), 'tiny-chat', 'tokenizer.json'), 'utf8')), 512, [2]);
  trial = startNodeGrammarTrial({ budgetMs: BUDGET_MS, workers: 1 });
  await trial.run({ type: 'regex', pattern: 'warm', param: 'regex' }, 'tiny', () => vocab);
}, 60_000);

afterAll(() => trial?.close());

const run = (spec: GrammarSpec) => trial.run(spec, 'tiny', () => vocab);
const timed = async (spec: GrammarSpec) => {
  const t0 = Date.now();
  const outcome = await run(spec).then(() => 'ok' as const, (e: unknown) => e);
  return { outcome, ms: Date.now() - t0 };
};

describe('grammar trials in a worker thread', () => {
  it('refuse a compile that runs past the budget in about the budget, and compile the next at once', async () => {
    // Over a minute on the fixture's vocabulary (the limits refuse it before any trial; a trial takes what it is given).
    const slow = await timed({ type: 'regex', pattern: '((a|b){1,300}){1,300}', param: 'sampling_params.regex' });
    expect(slow.outcome, String(slow.outcome)).toBeInstanceOf(TrialRefusal);
    expect((slow.outcome as Error).message).toMatch(/longer than 300 ms/);
    expect(slow.ms).toBeLessThan(BUDGET_MS + 1_500);
    const next = await timed({ type: 'json_schema', schema: '{"type":"object","properties":{"a":{"type":"string"}}}', param: 'response_format' });
    expect(next.outcome).toBe('ok');
  }, 60_000);

  it("refuse a grammar that crashes XGrammar with XGrammar's reason, and compile the next", async () => {
    // 300 nested groups: XGrammar's parser overflows its stack (the limits keep this out of the engine).
    const crash = await timed({ type: 'ebnf', grammar: 'root ::= ' + '('.repeat(300) + '"a"' + ')'.repeat(300), param: 'sampling_params.ebnf' });
    expect(crash.outcome).toBeInstanceOf(TrialRefusal);
    const refused = await timed({ type: 'json_schema', schema: '{"$ref":"#/$defs/nope"}', param: 'response_format' });
    expect((refused.outcome as Error).message).toMatch(/Cannot find field \$defs/);
    for (let i = 0; i < 80; i++) await expect(run({ type: 'ebnf', grammar: `root ::= ( "${i}"`, param: 'ebnf' })).rejects.toBeInstanceOf(TrialRefusal);
    expect((await timed({ type: 'regex', pattern: '[a-z]+@[a-z]+\\.com', param: 'regex' })).outcome).toBe('ok');
  }, 60_000);
});
