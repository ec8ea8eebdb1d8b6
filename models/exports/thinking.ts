// A designed reasoning model on Qwen3's real vocabulary: whatever the conversation, its greedy
// reply to a prompt that ends in the chat template's generation prompt is a known think block
// and a known answer, then EOS. Random weights never write a think block, so the reasoning
// tests need weights chosen for it.
//
// How: every layer's output projections (o_proj, down_proj) are zero, so the residual stream
// at the last position is that token's embedding, untouched by the (random, still computed)
// attention and MLP. Each token of the design's chains has a one-hot embedding of its own
// ("state"), and every other token shares one more state. After the final RMSNorm a one-hot
// row is exactly √hidden on its axis and exactly zero elsewhere, so logits are that state's
// row of lm_head: the next token of its chain at MARGIN, a runner-up where one is designed at
// half that, and exactly 0 for every other token (ties are broken the same way everywhere).
import type { LlamaConfig, LlamaWeights } from '../llama/weights.js';
import { randomLlama } from '../llama/weights.js';
import type { Rng } from '../rng.js';

/** The designed reply, as text (what the real tokenizer encodes to exactly the designed tokens). */
export const THINKING_REPLY = {
  thinking: 'The user greets me, so a short friendly reply fits.\n',
  answer: 'Hello! How can I help you today?',
};

// The chains, token by token, in the tokenizer's own pieces (plain text here; byte-level below).
const THINKING = ['The', ' user', ' gre', 'ets', ' me', ',', ' so', ' a', ' short', ' friendly', ' reply', ' fits', '.\n'];
const ANSWER = ['Hello', '!', ' How', ' can', ' I', ' help', ' you', ' today', '?'];
const OPEN = '<think>';
const CLOSE = '</think>';
const EOS = '<|im_end|>';
/** The last token of Qwen3's generation prompt `<|im_start|>assistant\n`, and of `…<think>\n`. */
const NEWLINE = '\n';
/** What follows `</think>`, as Qwen3 writes it (and the last token of the prompt with thinking off). */
const GAP = '\n\n';
/** Closes a JSON string: the answer's runner-up to EOS where a grammar does not allow EOS. */
const QUOTE = '"';

const MARGIN = 16;

export interface ThinkingDesign {
  /** The template opens the think block in the prompt (ends `<think>\n`): the reply starts inside it. */
  openInPrompt: boolean;
}

/** GPT-2's byte-level alphabet: each byte as the printable character the vocabulary writes. */
function byteLevel(text: string): string {
  const printable = (b: number) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  const table = new Map<number, string>();
  let n = 0;
  for (let b = 0; b < 256; b++) table.set(b, String.fromCharCode(printable(b) ? b : 256 + n++));
  return [...new TextEncoder().encode(text)].map((b) => table.get(b)!).join('');
}

interface TokenizerJson {
  model: { vocab: Record<string, number> };
  added_tokens: { id: number; content: string }[];
}

/** Token ids of the design's pieces in this vocabulary (special and added tokens by their content). */
function idsOf(tokenizer: TokenizerJson): (piece: string) => number {
  const added = new Map(tokenizer.added_tokens.map((t) => [t.content, t.id]));
  return (piece) => {
    const id = added.get(piece) ?? tokenizer.model.vocab[byteLevel(piece)];
    if (id === undefined) throw new Error(`the designed piece ${JSON.stringify(piece)} is not a token of this vocabulary`);
    return id;
  };
}

/** Each state's successors: [next token, weight relative to MARGIN], best first. */
function transitions(design: ThinkingDesign): [string, [string, number][]][] {
  const chain = (pieces: string[], last: [string, number][]): [string, [string, number][]][] =>
    pieces.map((p, i) => [p, i + 1 < pieces.length ? [[pieces[i + 1]!, 1]] : last]);
  return [
    // Where the prompt ends: open the block, or (opened in the prompt) start thinking.
    [NEWLINE, [[design.openInPrompt ? THINKING[0]! : OPEN, 1]]],
    [OPEN, [[THINKING[0]!, 1]]],
    ...chain(THINKING, [[CLOSE, 1]]),
    [CLOSE, [[GAP, 1]]],
    [GAP, [[ANSWER[0]!, 1]]],
    // The answer ends the reply; inside a JSON string, where EOS is not allowed, it closes the string.
    ...chain(ANSWER, [[EOS, 1], [QUOTE, 0.5]]),
  ];
}

/**
 * The weights: Qwen3-shaped layers with random q/k/v/gate/up and zero output projections, one-hot
 * embeddings per state, and lm_head rows that name each state's successors. Every token outside
 * the chains shares the last state, whose successor is EOS (so any other prompt ends at once)
 * and, where a grammar forbids EOS (a JSON string just opened), the answer: so a constrained
 * answer after the thinking is the designed one, whatever the grammar's layout around it.
 */
export function thinkingWeights(config: LlamaConfig, tokenizer: TokenizerJson, rng: Rng, design: ThinkingDesign): LlamaWeights {
  const w = randomLlama(config, rng, 0.4);
  for (const layer of w.layers) {
    layer.o.fill(0);
    layer.down.fill(0);
  }
  const { hidden: H, vocabSize: V } = config;
  const id = idsOf(tokenizer);
  const table = transitions(design);
  const tokens = table.map(([piece]) => id(piece));
  if (new Set(tokens).size !== tokens.length) throw new Error('a token appears twice in the design: its state would have two successors');
  const states = table.length + 1; // the chains' tokens, then everyone else
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
  w.lmHead[other * V + id(EOS)] = scale;
  w.lmHead[other * V + id(ANSWER[0]!)] = 0.5 * scale;
  return w;
}
