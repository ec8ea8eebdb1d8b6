import { describe, expect, it } from 'vitest';
import { StopMatcher } from '../../src/engine/text/stop-matcher.js';

function run(stops: string[], deltas: string[]) {
  const m = new StopMatcher(stops);
  let shown = '';
  for (const d of deltas) {
    const { emit, matched } = m.push(d);
    shown += emit;
    if (matched !== null) return { shown, matched, value: m.value };
  }
  shown += m.flush();
  return { shown, matched: null, value: m.value };
}

describe('stop strings', () => {
  it('match a stop string split across tokens and trim it', () => {
    expect(run(['END'], ['hello E', 'N', 'D more'])).toEqual({ shown: 'hello ', matched: 'END', value: 'hello ' });
  });

  it('stop at the very start with empty text', () => {
    expect(run(['##'], ['#', '#', 'after'])).toEqual({ shown: '', matched: '##', value: '' });
  });

  it('hold back a possible prefix, then release it when it turns out not to match', () => {
    const m = new StopMatcher(['STOP']);
    expect(m.push('abc ST').emit).toBe('abc ');
    expect(m.push('x').emit).toBe('STx');
  });

  it('release held-back text at the end of generation', () => {
    expect(run(['STOP'], ['tail S', 'T'])).toEqual({ shown: 'tail ST', matched: null, value: 'tail ST' });
  });

  it('pick the earliest of several stop strings', () => {
    expect(run(['world', 'lo w'], ['hello world'])).toMatchObject({ shown: 'hel', matched: 'lo w' });
  });

  it('find a stop string that arrives inside one large delta after earlier text', () => {
    expect(run(['\n\n'], ['a', 'b\n', '\nc'])).toMatchObject({ shown: 'ab', matched: '\n\n' });
  });
});
