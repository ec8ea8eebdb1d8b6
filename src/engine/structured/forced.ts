// Text that a grammar forces (a tool call's `<tool_call>\n{"name": "f", "arguments": ` and its
// tail, a schema's property names and punctuation) is written in the tokens the tokenizer itself
// makes of it. A mask alone allows every spelling of that text: `<tool_call>` as its one token or
// as `<`, `t`, `o`, … one byte a token, and the model's choice among them costs its budget (a
// model with no preference between them, or no wish to write the text at all, can spend dozens
// of tokens on a call's fixed head) and puts it off the spelling it was trained on. As XGrammar's
// jump-forward decoding does, the next token is then the first of the text's own encoding.

/** The tokenizer's encoding of a text, special tokens named in the text included, none added. */
export type Encode = (text: string) => number[];

/** Characters of the forced text encoded at a time: enough that its first token is the one the
 * whole text's encoding starts with (a pre-token longer than this is cut short, which is still valid). */
const LOOKAHEAD = 64;

/** The first token of the forced text's own encoding; undefined where nothing is forced. */
export function forcedToken(text: string, encode: Encode): number | undefined {
  if (!text) return undefined;
  const head = text.length > LOOKAHEAD ? Array.from(text).slice(0, LOOKAHEAD).join('') : text;
  return encode(head)[0];
}
