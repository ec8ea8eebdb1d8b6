// Reasoning models in the engine: which models think (tags.ts), where a reply starts, and the
// gate that follows each reply through its think block (and keeps a grammar to the answer).
import type { ThinkingStart } from '../protocol.js';
import type { TextCodec } from '../text/codec.js';
import { ThinkingGate, type TokenConstraint } from './gate.js';
import { thinkingStart } from './tags.js';
import { ThinkingTracker } from './tracker.js';
import { whitespaceTokens } from './whitespace.js';

export { THINK_CLOSE, THINK_OPEN, thinkingStart, writesThinking } from './tags.js';
export { ThinkingGate, type TokenConstraint } from './gate.js';
export { ThinkingTracker } from './tracker.js';

/** The gate of one reply to `prompt` (the rendered prompt's text), keeping `grammar`, if any, to the answer. */
export function thinkingGate(codec: TextCodec, prompt: string, eos: readonly number[], grammar?: TokenConstraint): { start: ThinkingStart; gate: ThinkingGate } {
  const start = thinkingStart(prompt);
  const tracker = new ThinkingTracker(start, (id) => codec.tokenText(id));
  const open = codec.thinkOpenId === undefined ? [] : [codec.thinkOpenId];
  return { start, gate: new ThinkingGate(tracker, { open, eos, whitespace: () => whitespaceTokens(codec) }, grammar) };
}
