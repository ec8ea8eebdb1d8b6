// Text that a grammar forces (a tool call's `<tool_call>\n{"name": "f", "arguments": ` and its
// tail, a schema's property names and punctuation) is written in the tokens the tokenizer itself
// makes of it. A mask alone allows every spelling of that text: `<tool_call>` as its one token or
// as `<`, `t`, `o`, … one byte a token, and the model's choice among them costs its budget (a
// model with no preference between them, or no wish to write the text at all, can spend dozens
// of tokens on a call's fixed head) and puts it off the spelling it was trained on. As XGrammar's
// jump-forward decoding does, the forced text's tokens are then its own encoding's.

/** The tokenizer's encoding of a text, special tokens named in the text included, none added. */
export type Encode = (text: string) => number[];

/** Characters of the forced text encoded at a time: its encoding's first tokens are the whole
 * text's (a pre-token longer than this is cut short, which is still valid). */
const LOOKAHEAD = 64;

/** The tokens to write a forced text in, first to last; empty where nothing is forced. Of a text
 * longer than the lookahead, the window's last token (which may be cut) is left to the next call. */
export function forcedTokens(text: string, encode: Encode): number[] {
  if (!text) return [];
  if (text.length <= LOOKAHEAD) return encode(text);
  let head = text.slice(0, LOOKAHEAD);
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  const ids = encode(head);
  return ids.length > 1 ? ids.slice(0, -1) : ids;
}
