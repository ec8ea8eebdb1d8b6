// The fixture tokenizer loads in transformers.js, round-trips text and renders ChatML.
import { AutoTokenizer, env } from '@huggingface/transformers';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixtureTokenizer } from '../../models/index.js';
import { encoder, fixturesDir } from './helpers.js';

type Tok = Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>;
let tok: Tok;
const bpe = fixtureTokenizer();
const enc = encoder();

beforeAll(async () => {
  env.localModelPath = await fixturesDir();
  env.allowRemoteModels = false;
  tok = await AutoTokenizer.from_pretrained('tiny-chat', { local_files_only: true });
});

describe('the fixture tokenizer', () => {
  it('has 512 tokens: 256 bytes, trained merges and three specials at the end', () => {
    expect(bpe.vocab.length).toBe(512);
    expect(bpe.specialIds).toEqual({ '<|endoftext|>': 509, '<|im_start|>': 510, '<|im_end|>': 511 });
  });

  it('makes role names, newline and common words single tokens', () => {
    for (const word of ['assistant', 'user', 'system', '\n', ' the', 'Hello']) expect(tok.encode(word, { add_special_tokens: false })).toHaveLength(1);
  });

  it.each([
    'Hello, how are you today?',
    'The cat sat on the mat.\n\nNew paragraph\twith tabs   and  spaces ',
    'Café, naïve, Ångström, façade',
    'Emoji 😀👍🏽 and CJK 日本語 中文 한국어',
    'Numbers 12345 and symbols <>&%$#@!',
  ])('round-trips %j exactly and encodes as the builder does', (text) => {
    const ids = tok.encode(text, { add_special_tokens: false });
    expect(tok.decode(ids)).toBe(text);
    expect(ids).toEqual(enc.encode(text));
    expect(enc.decode(ids)).toBe(text);
  });

  it('keeps special tokens whole', () => {
    expect(tok.encode('<|im_start|>user\nhi<|im_end|>', { add_special_tokens: false })).toEqual(enc.encode('<|im_start|>user\nhi<|im_end|>'));
    expect(enc.encode('<|im_start|>user\n').slice(0, 3)).toEqual([510, bpe.vocab.indexOf('user'), 10]);
  });

  it('renders the ChatML template with a generation prompt', () => {
    const text = tok.apply_chat_template(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi there' },
      ],
      { tokenize: false, add_generation_prompt: true },
    );
    expect(text).toBe('<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n');
  });
});
