// What the costliest answer to a forwarded request could be made of, read from its
// body before the upstream sees it, so the caller's cap can hold that much at
// admission. Tolerant: the body is not validated yet, and anything unreadable
// counts as its largest case (no max_tokens: the context left).
export interface CostShape {
  /** Prompts (or embedding inputs), each at most the model's context long. */
  prompts: number;
  /** Completions per prompt. */
  n: number;
  /** Tokens per completion; undefined: the context left. */
  maxTokens?: number;
  /** Embeddings: input tokens only. */
  embedding?: boolean;
}

type Body = Record<string, unknown>;

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);

/** Several prompts when it is an array of strings or of token arrays; one otherwise. */
const promptCount = (v: unknown): number => (Array.isArray(v) && v.length > 0 && typeof v[0] !== 'number' ? v.length : 1);

export function costShape(endpoint: 'chat' | 'completion' | 'embedding' | 'generate', body: Body): CostShape {
  if (endpoint === 'embedding') return { prompts: promptCount(body.input), n: 1, embedding: true };
  if (endpoint === 'generate') {
    const sp = (body.sampling_params && typeof body.sampling_params === 'object' ? body.sampling_params : {}) as Body;
    return { prompts: promptCount(body.text ?? body.input_ids), n: count(sp.n) ?? 1, maxTokens: count(sp.max_new_tokens) ?? 128 };
  }
  const maxTokens = count(endpoint === 'chat' ? (body.max_completion_tokens ?? body.max_tokens) : body.max_tokens);
  return { prompts: endpoint === 'chat' ? 1 : promptCount(body.prompt), n: count(body.n) ?? 1, maxTokens };
}
