// The engine reports logprobs once, in its own shape; each API has its own.
import type { TokenLogprob } from '../engine/protocol.js';

/** What OpenAI reports for a token with no chance at all (JSON has no -Infinity: it would go out as null). */
export const LOGPROB_FLOOR = -9999;

/** A logprob as a finite number: -Infinity (a token masked out or banned) and NaN become the floor. */
export function finite(logprob: number): number {
  return Number.isFinite(logprob) ? logprob : logprob > 0 ? 0 : LOGPROB_FLOOR;
}

export interface ChatTokenLogprob {
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs: { token: string; logprob: number; bytes: number[] | null }[];
}

/** chat.completion: `logprobs.content[]`. */
export function chatLogprobs(lps: TokenLogprob[] | undefined): ChatTokenLogprob[] {
  return (lps ?? []).map((t) => ({
    token: t.token,
    logprob: finite(t.logprob),
    bytes: t.bytes,
    top_logprobs: t.top.map((x) => ({ token: x.token, logprob: finite(x.logprob), bytes: x.bytes })),
  }));
}

export interface LegacyLogprobs {
  tokens: string[];
  token_logprobs: number[];
  top_logprobs: Record<string, number>[];
  text_offset: number[];
}

/** text_completion: parallel arrays; text_offset counts characters from the start of `text`
 * (so past the echoed prompt when echo is on). */
export function legacyLogprobs(lps: TokenLogprob[] | undefined, startOffset: number): LegacyLogprobs {
  const out: LegacyLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let off = startOffset;
  for (const t of lps ?? []) {
    out.tokens.push(t.token);
    out.token_logprobs.push(finite(t.logprob));
    out.top_logprobs.push(Object.fromEntries(t.top.map((x) => [x.token, finite(x.logprob)])));
    out.text_offset.push(off);
    off += t.token.length;
  }
  return out;
}

/** SGLang: [logprob, token_id, text]. */
export type SglangLogprob = [number, number, string];

export function sglangLogprobs(lps: TokenLogprob[] | undefined): SglangLogprob[] {
  return (lps ?? []).map((t) => [finite(t.logprob), t.token_id, t.token]);
}

export function sglangTopLogprobs(lps: TokenLogprob[] | undefined): SglangLogprob[][] {
  return (lps ?? []).map((t) => t.top.map((x): SglangLogprob => [finite(x.logprob), x.token_id, x.token]));
}
