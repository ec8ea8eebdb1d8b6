// The engine reports logprobs once, in its own shape; each API has its own.
import type { TokenLogprob } from '../engine/protocol.js';

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
    logprob: t.logprob,
    bytes: t.bytes,
    top_logprobs: t.top.map((x) => ({ token: x.token, logprob: x.logprob, bytes: x.bytes })),
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
    out.token_logprobs.push(t.logprob);
    out.top_logprobs.push(Object.fromEntries(t.top.map((x) => [x.token, x.logprob])));
    out.text_offset.push(off);
    off += t.token.length;
  }
  return out;
}

/** SGLang: [logprob, token_id, text]. */
export type SglangLogprob = [number, number, string];

export function sglangLogprobs(lps: TokenLogprob[] | undefined): SglangLogprob[] {
  return (lps ?? []).map((t) => [t.logprob, t.token_id, t.token]);
}

export function sglangTopLogprobs(lps: TokenLogprob[] | undefined): SglangLogprob[][] {
  return (lps ?? []).map((t) => t.top.map((x): SglangLogprob => [x.logprob, x.token_id, x.token]));
}
