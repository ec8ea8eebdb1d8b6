// A designed copying model on Qwen3's real vocabulary: its greedy reply to a chat prompt is a
// known passage, then EOS. Put that passage in the prompt ("repeat after me: …") and the reply
// copies its prompt word for word, as a summary's phrases, a quoted retrieval passage, a code
// edit or JSON echoing its input do: prompt lookup (speculative decoding) should then draft
// nearly every token. Random weights never repeat their input, so the tests and the bench of
// speculation need weights chosen for it (designed.ts says how the weights pick each token).
import type { LlamaConfig, LlamaWeights } from '../llama/weights.js';
import type { Rng } from '../rng.js';
import { designedWeights, type TokenizerJson, type Transition } from './designed.js';

/** The passage: 52 tokens of Qwen3's vocabulary, no token twice (each has one successor). */
export const COPYING_PASSAGE =
  'Hearth runs language models on your own machine: inside one browser tab, as a local server or within tests. Every token comes from some real graph and nothing leaves the device! Developers keep their usual SDK; point it at this endpoint then ship offline demos quickly';

// The passage in the tokenizer's own pieces (what it encodes the passage to; a test checks it).
const PIECES = [
  'H', 'earth', ' runs', ' language', ' models', ' on', ' your', ' own', ' machine', ':', ' inside', ' one', ' browser', ' tab', ',', ' as', ' a',
  ' local', ' server', ' or', ' within', ' tests', '.', ' Every', ' token', ' comes', ' from', ' some', ' real', ' graph', ' and', ' nothing',
  ' leaves', ' the', ' device', '!', ' Developers', ' keep', ' their', ' usual', ' SDK', ';', ' point', ' it', ' at', ' this', ' endpoint',
  ' then', ' ship', ' offline', ' demos', ' quickly',
];
const EOS = '<|im_end|>';
/** The last token of Qwen3's generation prompt `<|im_start|>assistant\n`. */
const NEWLINE = '\n';

/** The copying fixtures' shapes: one-hot states need hidden_size ≥ the passage's tokens + 2. */
export const COPYING_DIMS = { hidden: 64, heads: 2, kvHeads: 1, headDim: 32, intermediate: 64 };

/** The weights: the generation prompt's last token leads into the passage, the passage into EOS, every other token into EOS. */
export function copyingWeights(config: LlamaConfig, tokenizer: TokenizerJson, rng: Rng): LlamaWeights {
  const table: Transition[] = [
    [NEWLINE, [[PIECES[0]!, 1]]],
    ...PIECES.map((p, i): Transition => [p, [[PIECES[i + 1] ?? EOS, 1]]]),
  ];
  return designedWeights(config, tokenizer, rng, table, [[EOS, 1]]);
}
