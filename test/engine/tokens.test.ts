// /tokenize and /detokenize in the engine, on a real tokenizer that adds a special token of its
// own (Llama 3's <|begin_of_text|>): text encodes as transformers.js encodes it, special tokens
// added unless asked not to; messages render as transformers.js's apply_chat_template with the
// generation prompt (the template writes its BOS, so none is added); detokenize keeps special
// tokens, refuses ids past the vocabulary, and a tokenizer with no template refuses messages.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TextCodec } from '../../src/engine/text/codec.js';
import { detokenize, tokenize } from '../../src/engine/tokens.js';
import { fixtures } from '../helpers/fixtures.js';
import { exportFixtures, referencePromptIds, referenceTokenizer } from '../helpers/exports.js';

const MODEL = 'llama3-export';
const TEXT = 'Où est la mer? 🌊';
const MESSAGES = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: TEXT },
];

let llama: TextCodec;
let embed: TextCodec;
beforeAll(async () => {
  llama = await TextCodec.load(join(await exportFixtures(), MODEL), { localOnly: true });
  embed = await TextCodec.load(join(await fixtures(), 'tiny-embed'), { localOnly: true });
}, 120_000);

const req = (prompt: Parameters<typeof tokenize>[1]['prompt'], extra: Record<string, unknown> = {}) => ({ model: `svc/${MODEL}`, prompt, ...extra });

describe('tokenize', () => {
  it('encodes text as transformers.js does, with the special tokens unless add_special_tokens is false', async () => {
    const ref = await referenceTokenizer(MODEL);
    const withBos = tokenize(llama, req({ text: TEXT })).tokens;
    expect(withBos).toEqual(ref.encode(TEXT));
    expect(withBos[0]).toBe(ref.encode('', { add_special_tokens: true })[0]);
    expect(tokenize(llama, req({ text: TEXT }, { add_special_tokens: false })).tokens).toEqual(withBos.slice(1));
  });

  it('renders messages as apply_chat_template with the generation prompt, adding no special token by default', async () => {
    const tokens = tokenize(llama, req({ messages: MESSAGES })).tokens;
    expect(tokens).toEqual(await referencePromptIds(MODEL, MESSAGES));
    const open = tokenize(llama, req({ messages: MESSAGES }, { add_generation_prompt: false })).tokens;
    expect(open.length).toBeLessThan(tokens.length);
    expect(tokens.slice(0, open.length)).toEqual(open);
    // Asked for, the BOS is added in front of the template's own, as vLLM's tokenizer call does.
    expect(tokenize(llama, req({ messages: MESSAGES }, { add_special_tokens: true })).tokens).toEqual([tokens[0], ...tokens]);
  });

  it("gives each token's vocabulary string when asked", () => {
    const r = tokenize(llama, req({ text: 'hello world' }, { return_token_strs: true }));
    expect(r.token_strs).toEqual(['<|begin_of_text|>', 'hello', 'Ġworld']);
    expect(tokenize(llama, req({ text: 'hello world' })).token_strs).toBeUndefined();
  });

  it('refuses messages for a tokenizer with no chat template, naming messages', () => {
    expect(() => tokenize(embed, { model: 'svc/tiny-embed', prompt: { messages: [{ role: 'user', content: 'hi' }] } })).toThrow(
      expect.objectContaining({ code: 'invalid_value', param: 'messages' }),
    );
    expect(tokenize(embed, { model: 'svc/tiny-embed', prompt: { text: 'the sea' } }).tokens).toEqual(embed.encodeText('the sea'));
  });
});

describe('detokenize', () => {
  it('gives back the prompt the template wrote, special tokens kept', async () => {
    const tokens = tokenize(llama, req({ messages: MESSAGES })).tokens;
    const rendered = llama.renderChat(MESSAGES);
    expect(detokenize(llama, tokens).prompt).toBe(rendered);
    expect(rendered).toContain('<|begin_of_text|>');
    expect(detokenize(llama, []).prompt).toBe('');
  });

  it('refuses a token id outside the vocabulary, naming tokens', () => {
    expect(() => detokenize(llama, [1, llama.vocabSize])).toThrow(expect.objectContaining({ code: 'invalid_value', param: 'tokens' }));
    expect(() => detokenize(llama, [llama.vocabSize - 1])).not.toThrow();
  });
});
