// What the costliest answer to a forwarded request could be made of, read from its
// body before the upstream sees it, so the caller's cap can hold that much at
// admission. Tolerant: the body is not validated yet, and anything unreadable
// counts as its largest case (no max_tokens: the context left).
//
// Hearth cannot run an upstream model's tokenizer, so a prompt is bounded from its
// text: byte-level BPE and byte-fallback tokenizers never make more tokens than the
// text has UTF-8 bytes, and a chat template wraps each message in a few special tokens
// (ChatML's `<|im_start|>user\n … <|im_end|>\n`, Llama 3's header ids, Mistral's
// `[INST]`), which MESSAGE_ALLOWANCE covers, as it covers the reply's own header
// and the BOS token. A template that writes a long preamble of its own (Llama 3.1's
// dated system block) can go past it; the settlement charges the upstream's real
// count all the same.
export interface CostShape {
  /** Each prompt's (or embedding input's) tokens at most; the caller caps them at the context. */
  prompts: number[];
  /** Completions per prompt. */
  n: number;
  /** Tokens per completion; undefined: the context left. */
  maxTokens?: number;
  /** Embeddings: input tokens only. */
  embedding?: boolean;
}

type Body = Record<string, unknown>;

/** Tokens a template may add around one message (or the reply's header), beyond its text. */
export const MESSAGE_ALLOWANCE = 8;

const encoder = new TextEncoder();

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

const bytes = (s: string) => encoder.encode(s).length;

/** UTF-8 bytes of every string (and number) in a value, at any depth: message parts, names. */
function textBytes(v: unknown): number {
  if (typeof v === 'string') return bytes(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v).length;
  if (Array.isArray(v)) return v.reduce<number>((n, x) => n + textBytes(x), 0);
  if (v && typeof v === 'object') return Object.values(v).reduce<number>((n, x) => n + textBytes(x), 0);
  return 0;
}

/** What templates render as JSON (tools, an assistant's tool calls) counts as its JSON, keys and all. */
const jsonBytes = (v: unknown): number => bytes(JSON.stringify(v) ?? '');

function messageBytes(m: unknown): number {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return textBytes(m);
  return Object.entries(m).reduce<number>((n, [k, x]) => n + (k === 'tool_calls' ? jsonBytes(x) : textBytes(x)), 0);
}

/** One raw prompt (completions, /generate, embeddings): a token array counts as its length. */
function promptBound(v: unknown): number {
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number')) return v.length;
  return textBytes(v) + MESSAGE_ALLOWANCE;
}

/** Several prompts when it is an array of strings or of token arrays; one otherwise. */
const promptBounds = (v: unknown): number[] =>
  Array.isArray(v) && v.length > 0 && typeof v[0] !== 'number' ? v.map(promptBound) : [promptBound(v)];

/** A chat request's one prompt: every message and every tool with its allowance, and the reply's header. */
function chatBound(body: Body): number {
  const messages = Array.isArray(body.messages) ? body.messages : [body.messages];
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const wrapped = (n: number) => n + MESSAGE_ALLOWANCE;
  return messages.reduce<number>((n, m) => n + wrapped(messageBytes(m)), 0) + tools.reduce<number>((n, t) => n + wrapped(jsonBytes(t)), 0) + MESSAGE_ALLOWANCE;
}

export function costShape(endpoint: 'chat' | 'completion' | 'embedding' | 'generate', body: Body): CostShape {
  if (endpoint === 'embedding') return { prompts: promptBounds(body.input), n: 1, embedding: true };
  if (endpoint === 'generate') {
    const sp = (body.sampling_params && typeof body.sampling_params === 'object' ? body.sampling_params : {}) as Body;
    return { prompts: promptBounds(body.text ?? body.input_ids), n: count(sp.n) ?? 1, maxTokens: count(sp.max_new_tokens) ?? 128 };
  }
  const maxTokens = count(endpoint === 'chat' ? (body.max_completion_tokens ?? body.max_tokens) : body.max_tokens);
  return { prompts: endpoint === 'chat' ? [chatBound(body)] : promptBounds(body.prompt), n: count(body.n) ?? 1, maxTokens };
}
