// Designed weights: a decoder whose greedy next token is chosen by its current token alone, for
// fixtures whose reply must be known (a reasoning model's think block, a reply that copies its
// prompt). Random weights never write such replies.
//
// How: every layer's output projections (o_proj, down_proj) are zero, so the residual stream
// at the last position is that token's embedding, untouched by the (random, still computed)
// attention and MLP. Each token of the design has a one-hot embedding of its own ("state"), and
// every other token shares one more state. After the final RMSNorm a one-hot row is exactly
// √hidden on its axis and exactly zero elsewhere, so logits are that state's row of lm_head:
// the designed successor at MARGIN, a runner-up where one is designed at a fraction of that, and
// exactly 0 for every other token (ties are broken the same way everywhere).
import type { LlamaConfig, LlamaWeights } from '../llama/weights.js';
import { randomLlama } from '../llama/weights.js';
import type { Rng } from '../rng.js';

const MARGIN = 16;

export interface TokenizerJson {
  model: { vocab: Record<string, number> };
  added_tokens: { id: number; content: string }[];
}

/** A token (by its text) and its successors: [next token, weight relative to MARGIN], best first. */
export type Transition = [string, [string, number][]];

/** GPT-2's byte-level alphabet: each byte as the printable character the vocabulary writes. */
function byteLevel(text: string): string {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const table = new Map<number, string>();
  let n = 0;
  for (let b = 0; b < 256; b++) table.set(b, String.fromCharCode(printable(b) ? b : 256 + n++));
  return [...new TextEncoder().encode(text)].map((b) => table.get(b)!).join('');
}

/** Token ids of the design's pieces in this vocabulary (special and added tokens by their content). */
export function idsOf(tokenizer: TokenizerJson): (piece: string) => number {
  const added = new Map(tokenizer.added_tokens.map((t) => [t.content, t.id]));
  return (piece) => {
    const id = added.get(piece) ?? tokenizer.model.vocab[byteLevel(piece)];
    if (id === undefined) throw new Error(`the designed piece ${JSON.stringify(piece)} is not a token of this vocabulary`);
    return id;
  };
}

/**
 * The weights: layers with random q/k/v/gate/up and zero output projections, one-hot embeddings
 * per state, and lm_head rows that name each state's successors; every token outside `table`
 * shares the last state, whose successors are `others`.
 */
export function designedWeights(config: LlamaConfig, tokenizer: TokenizerJson, rng: Rng, table: Transition[], others: [string, number][]): LlamaWeights {
  const w = randomLlama(config, rng, 0.4);
  for (const layer of w.layers) {
    layer.o.fill(0);
    layer.down.fill(0);
  }
  const { hidden: H, vocabSize: V } = config;
  const id = idsOf(tokenizer);
  const tokens = table.map(([piece]) => id(piece));
  if (new Set(tokens).size !== tokens.length) throw new Error('a token appears twice in the design: its state would have two successors');
  const states = table.length + 1; // the design's tokens, then everyone else
  if (states > H) throw new Error(`the design has ${states} states; hidden_size ${H} holds at most ${H}`);
  const other = table.length;
  w.embed.fill(0);
  for (let t = 0; t < V; t++) w.embed[t * H + other] = 1;
  w.lmHead.fill(0);
  // After RMSNorm a one-hot row is √H on its axis: lm_head's row is scaled so the logit is MARGIN × weight.
  const scale = MARGIN / Math.sqrt(H);
  table.forEach(([, next], state) => {
    const t = tokens[state]!;
    w.embed.fill(0, t * H, (t + 1) * H);
    w.embed[t * H + state] = 1;
    for (const [p, weight] of next) w.lmHead[state * V + id(p)] = weight * scale;
  });
  for (const [p, weight] of others) w.lmHead[other * V + id(p)] = weight * scale;
  return w;
}
