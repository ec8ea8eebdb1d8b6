// Greedy sampling for Anthropic's SDK: its 1.x types (API version 2026-10-21) have no
// `temperature`, while the Messages API still takes it (Hearth as Anthropic's, default 1.0), and
// the tests compare greedy replies. Spread into a request: `{ model, ...GREEDY, messages }`.
export const GREEDY = { temperature: 0 } as object;
