// The tokens whose text is all whitespace, per loaded model (found once: real vocabularies
// hold 100k to 260k tokens, a few hundred of them whitespace).
import type { TextCodec } from '../text/codec.js';

const found = new WeakMap<TextCodec, ReadonlySet<number>>();

const WHITESPACE = new Set([0x20, 0x0a, 0x0d, 0x09]);

export function whitespaceTokens(codec: TextCodec): ReadonlySet<number> {
  let ids = found.get(codec);
  if (!ids) {
    const set = new Set<number>();
    for (let id = 0; id < codec.vocabSize; id++) {
      if (codec.isSpecial(id)) continue;
      const bytes = codec.tokenBytes(id);
      if (bytes.length > 0 && bytes.every((b) => WHITESPACE.has(b))) set.add(id);
    }
    found.set(codec, (ids = set));
  }
  return ids;
}
