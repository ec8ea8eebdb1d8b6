// Each token's raw bytes, for streaming and logprobs, from real vocabularies: GPT-2
// byte-level (Llama 3, Qwen3) and SentencePiece with byte fallback (Gemma 3), whose
// `<0xF0>`-style pieces carry one byte of a character the vocabulary lacks.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TextCodec } from '../../src/engine/text/codec.js';
import { exportFixtures } from '../helpers/exports.js';

let dir: string;
beforeAll(async () => {
  dir = await exportFixtures();
}, 120_000);

const TEXT = 'Héllo  wörld, 東京 \u{1D518}\u{2F9F4}\u{10347} ok 🙂\n\tend';

describe.each(['llama3-export', 'qwen3-export', 'gemma3-export'])('token bytes of %s', (name) => {
  it('stream to exactly the text the tokenizer decodes, rare characters and spaces included', async () => {
    const codec = await TextCodec.load(join(dir, name), { localOnly: true });
    const ids = codec.encodeText(TEXT);
    const d = codec.streamDecoder();
    const deltas = ids.map((id) => d.push(id));
    expect(deltas.join('') + d.end()).toBe(codec.decode(ids));
    expect(codec.decode(ids).normalize('NFC')).toContain(TEXT.normalize('NFC'));
    for (const delta of deltas) expect(delta).not.toContain('\uFFFD');
  }, 60_000);
});
