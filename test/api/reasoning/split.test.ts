// A reasoning model's reply split into thinking and answer, as text arrives in pieces: the tags
// and the whitespace around them are dropped, a tag cut anywhere never leaks into either part,
// and a reply that does not open a block is the answer exactly as written.
import { describe, expect, it } from 'vitest';
import { splitThinking, ThinkingSplitter } from '../../../src/api/reasoning/index.js';
import type { ThinkingStart } from '../../../src/engine/protocol.js';

/** The parts streamed from `pieces`, joined. */
function streamed(start: ThinkingStart, pieces: string[]): { reasoning: string; content: string; deltas: { reasoning: string; content: string }[] } {
  const s = new ThinkingSplitter(start);
  const deltas = [...pieces.map((p) => s.push(p)), s.end()];
  return { reasoning: deltas.map((d) => d.reasoning).join(''), content: deltas.map((d) => d.content).join(''), deltas };
}

const REPLY = '<think>\nThe user greets me.\nA short reply fits.\n</think>\n\nHello! <b>How</b> can I help?';

describe('splitting a reply into thinking and answer', () => {
  it('drops the tags and the whitespace around them, and keeps what is inside as written', () => {
    expect(splitThinking(REPLY, 'free')).toEqual({ reasoning: 'The user greets me.\nA short reply fits.', content: 'Hello! <b>How</b> can I help?' });
  });

  it('gives the same parts however the text is cut into pieces, and no piece of a tag leaks', () => {
    for (let i = 1; i < REPLY.length; i++) {
      for (let j = i + 1; j < REPLY.length; j += 7) {
        const r = streamed('free', [REPLY.slice(0, i), REPLY.slice(i, j), REPLY.slice(j)]);
        expect([r.reasoning, r.content], `cut at ${i}, ${j}`).toEqual(['The user greets me.\nA short reply fits.', 'Hello! <b>How</b> can I help?']);
        for (const d of r.deltas) expect(d.reasoning + d.content).not.toMatch(/<\/?t(h(i(nk?)?)?)?$|^\/?think>|think>/);
      }
    }
  });

  it('streams the thinking as it comes, holding only what may be a tag or the whitespace before one', () => {
    const r = streamed('free', ['<think>', 'The', ' user', ' greets', '.\n', '</think>', '\n\n', 'Hi', '!']);
    expect(r.deltas.map((d) => d.reasoning)).toEqual(['', 'The', ' user', ' greets', '.', '', '', '', '', '']);
    expect(r.deltas.map((d) => d.content)).toEqual(['', '', '', '', '', '', '', 'Hi', '!', '']);
  });

  it('starts inside the block when the prompt opened it', () => {
    expect(splitThinking('\nHmm.\n</think>\n\nHi', 'inside')).toEqual({ reasoning: 'Hmm.', content: 'Hi' });
  });

  it('leaves a reply that does not open a block whole, leading whitespace and later tags included', () => {
    expect(splitThinking('  Hi <think>x</think>', 'free')).toEqual({ reasoning: null, content: '  Hi <think>x</think>' });
    expect(splitThinking('\n', 'free')).toEqual({ reasoning: null, content: '\n' });
    expect(splitThinking('<think>x</think>y', 'after')).toEqual({ reasoning: null, content: '<think>x</think>y' });
  });

  it('keeps the thinking so far of a reply cut inside it, with the answer empty', () => {
    expect(splitThinking('<think>\nStep one.\nStep ', 'free')).toEqual({ reasoning: 'Step one.\nStep', content: '' });
  });

  it('reports no thinking for an empty block', () => {
    expect(splitThinking('<think>\n\n</think>\n\nHi', 'free')).toEqual({ reasoning: null, content: 'Hi' });
  });
});
