import { describe, expect, it } from 'vitest';
import { StreamDecoder } from '../../src/engine/text/codec.js';

// A byte-level vocabulary where each token is a few raw bytes, as in GPT-2-style BPE.
const bytes = [...new TextEncoder().encode('né🙂!')];
const vocab = [bytes.slice(0, 2), bytes.slice(2, 4), bytes.slice(4, 6), bytes.slice(6)].map((b) => Uint8Array.from(b));
const codec = { isSpecial: (id: number) => id === 99, tokenBytes: (id: number) => vocab[id] ?? new Uint8Array() };

describe('the streaming decoder', () => {
  it('never splits a multi-byte UTF-8 character across deltas', () => {
    const d = new StreamDecoder(codec);
    const deltas = [0, 1, 2, 3].map((id) => d.push(id));
    expect(deltas.join('') + d.end()).toBe('né🙂!');
    for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
    expect(deltas[0]).toBe('n'); // the first byte of é waits for the second
  });

  it('writes no text for special tokens', () => {
    const d = new StreamDecoder(codec);
    expect(d.push(99)).toBe('');
  });
});
