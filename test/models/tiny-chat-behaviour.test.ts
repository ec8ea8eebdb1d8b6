// tiny-chat's designed behaviour: clear greedy margins, replies that depend on the prompt
// and end with EOS, printable reply text, and sampling that varies with the seed.
import { describe, expect, it } from 'vitest';
import { fixtureTokenizer, tinyChat } from '../../models/index.js';
import { emptyCache, forward, greedy } from '../../models/reference.js';
import { Rng } from '../../models/rng.js';
import { ALL_PROMPTS, USER_MESSAGES, chatPrompt, encoder } from './helpers.js';

const design = tinyChat();
const enc = encoder();
const eos = [design.eos, fixtureTokenizer().specialIds['<|endoftext|>']];
const runs = ALL_PROMPTS.map((p) => ({ prompt: p, ...greedy(design.weights, enc.encode(p), 64, eos) }));

describe('tiny-chat greedy decoding', () => {
  it('leads the runner-up by at least 3 logits at every step of every prompt (about 4 typically)', () => {
    const margins = runs.flatMap((r) => r.margins).sort((a, b) => a - b);
    expect(runs.length).toBeGreaterThanOrEqual(50);
    expect(margins[0]).toBeGreaterThanOrEqual(3);
    const median = margins[Math.floor(margins.length / 2)]!;
    expect(median).toBeGreaterThanOrEqual(3.5);
    expect(median).toBeLessThanOrEqual(8.5);
  });

  it('ends every reply with <|im_end|> within 48 tokens, after at least 4 tokens', () => {
    for (const r of runs) {
      expect(r.tokens.at(-1), r.prompt).toBe(design.eos);
      expect(r.tokens.length, r.prompt).toBeLessThanOrEqual(48);
      expect(r.tokens.length, r.prompt).toBeGreaterThanOrEqual(5);
    }
  });

  it('replies with printable ASCII words', () => {
    for (const r of runs) {
      const text = enc.decode(r.tokens.slice(0, -1));
      expect(text).toMatch(/^[ A-Za-z0-9.,!?'-]+$/);
    }
  });

  it('gives different replies to different prompts', () => {
    const replies = USER_MESSAGES.slice(0, 8).map((m) => enc.decode(greedy(design.weights, enc.encode(chatPrompt(m)), 48, eos).tokens));
    expect(new Set(replies).size).toBeGreaterThanOrEqual(7);
  });

  it('varies with the seed when sampling at temperature 1.5', () => {
    const prompt = enc.encode(chatPrompt('Tell me a story about a cat and a dog.'));
    const sample = (seed: number) => {
      const rng = new Rng(seed);
      const cache = emptyCache(design.weights);
      let logits = forward(design.weights, prompt, prompt.map((_, i) => i), cache).at(-1)!;
      const out: number[] = [];
      for (let n = 0; n < 48; n++) {
        const m = Math.max(...logits);
        const p = Array.from(logits, (l) => Math.exp((l - m) / 1.5));
        let u = rng.next() * p.reduce((a, b) => a + b, 0);
        let tok = 0;
        while (tok < p.length - 1 && (u -= p[tok]!) > 0) tok++;
        out.push(tok);
        if (eos.includes(tok)) break;
        logits = forward(design.weights, [tok], [cache.length], cache)[0]!;
      }
      return out.join(',');
    };
    const samples = new Set(Array.from({ length: 8 }, (_, s) => sample(s + 1)));
    expect(samples.size).toBeGreaterThanOrEqual(4);
  });
});
