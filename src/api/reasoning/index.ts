// Reasoning models on the API: a reply's thinking apart from its answer (split.ts), what
// turns thinking off (effort.ts), and the thinking's share of the usage (usage.ts). The chat
// route uses them through tools/respond.ts; the Responses API can use them the same way.
export { ThinkingSplitter, splitThinking, type ThinkingParts } from './split.js';
export { REASONING_EFFORTS, thinkingKwargs, type ReasoningEffort } from './effort.js';
export { withReasoningTokens } from './usage.js';
