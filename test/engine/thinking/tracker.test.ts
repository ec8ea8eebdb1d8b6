// The tracker follows a reply through its think block token by token, on the tokens' text: a
// block opens only where the reply starts, tags count as thinking, and a tag in several
// tokens is found as well as a tag that is one token.
import { describe, expect, it } from 'vitest';
import type { ThinkingStart } from '../../../src/engine/protocol.js';
import { ThinkingTracker } from '../../../src/engine/thinking/index.js';

function follow(start: ThinkingStart, pieces: string[]): { phases: string[]; reasoning: number } {
  const t = new ThinkingTracker(start, (id) => pieces[id]!);
  const phases = pieces.map((_, id) => {
    t.push(id);
    return t.phase;
  });
  return { phases, reasoning: t.reasoningTokens };
}

describe('the thinking tracker', () => {
  it('counts a block the reply opens, both tags included, and nothing after it', () => {
    const r = follow('free', ['<think>', 'Hmm', '.', '</think>', '\n\n', 'Hi', '!']);
    expect(r.phases).toEqual(['thinking', 'thinking', 'thinking', 'answer', 'answer', 'answer', 'answer']);
    expect(r.reasoning).toBe(4);
  });

  it('counts from the first token when the prompt opened the block', () => {
    expect(follow('inside', ['Hmm', '</think>', 'Hi']).reasoning).toBe(2);
  });

  it('finds tags spelled in several tokens, and leading whitespace before the open tag', () => {
    const r = follow('free', ['\n', '<th', 'ink>', 'a', '</', 'think', '>', 'b']);
    expect(r.phases).toEqual(['start', 'start', 'thinking', 'thinking', 'thinking', 'thinking', 'answer', 'answer']);
    expect(r.reasoning).toBe(7);
  });

  it('takes a reply that does not open with <think> for an answer, even if one comes later', () => {
    const r = follow('free', ['Hi', ' <think>', 'x', '</think>']);
    expect(r.phases).toEqual(['answer', 'answer', 'answer', 'answer']);
    expect(r.reasoning).toBe(0);
  });

  it('counts nothing when the prompt closed the block', () => {
    expect(follow('after', ['<think>', 'x', '</think>']).reasoning).toBe(0);
  });

  it('counts every token of a reply cut inside its thinking', () => {
    const r = follow('free', ['<think>', 'a', 'b']);
    expect(r.phases.at(-1)).toBe('thinking');
    expect(r.reasoning).toBe(3);
  });
});
