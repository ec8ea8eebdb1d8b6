// /generate's ignore_eos beside a grammar (SGLang's sampling_params allow both): once the
// grammar is complete only the end may follow, so the reply ends there, valid, instead of the
// grammar engine aborting on a token past its end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineApi } from '../../../src/engine/protocol.js';
import { engineOn, greedy, request } from '../../helpers/engine-on.js';

let engine: EngineApi;
beforeAll(async () => {
  engine = await engineOn('cpu', 0);
}, 60_000);
afterAll(() => engine.dispose());

describe('ignore_eos with a grammar', () => {
  it('ends the reply where the grammar ends, with the JSON it allows', async () => {
    const grammar = { type: 'json_object' as const, param: 'response_format' };
    const r = await engine.generate(request('Describe a person.', greedy(200, { grammar, ignore_eos: true })), () => undefined);
    expect(r.finish_reason).toBe('stop');
    expect(() => JSON.parse(r.text)).not.toThrow();
  });
});
