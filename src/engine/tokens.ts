// Prompts to tokens and back, for /tokenize and /detokenize: the very encodings generate,
// embed and countTokens run (a chat through encodeChat, text through the codec's encodeText),
// so a count a client is given is the count it will be charged.
import { EngineError } from './errors.js';
import type { DetokenizeResult, PromptInput, TokenizeRequest, TokenizeResult } from './protocol.js';
import type { TextCodec } from './text/codec.js';

type ChatPrompt = Extract<PromptInput, { messages: unknown }>;

/**
 * A chat through the model's template. The template's own refusals (Mistral's and Gemma 2's
 * `raise_exception` on a system role or on roles that do not alternate) are the request's
 * fault: invalid_value on messages, as is a model with no template at all.
 */
export function encodeChat(codec: TextCodec, p: ChatPrompt, opts?: { addGenerationPrompt?: boolean; addSpecialTokens?: boolean }): { ids: number[]; text: string } {
  return asRequestFault(codec, () => codec.encodeChat(p.messages, p.tools, p.template_kwargs, opts));
}

/** The chat's text as the template renders it (the generation prompt added), its faults the request's as in encodeChat. */
export function renderChat(codec: TextCodec, p: ChatPrompt): string {
  return asRequestFault(codec, () => codec.renderChat(p.messages, p.tools, p.template_kwargs));
}

function asRequestFault<T>(codec: TextCodec, render: () => T): T {
  if (!codec.hasChatTemplate) {
    throw new EngineError('invalid_value', "This model has no chat template, so it cannot take 'messages'; send its text as a prompt instead.", 'messages');
  }
  try {
    return render();
  } catch (e) {
    throw new EngineError('invalid_value', `This model's chat template refuses these messages: ${e instanceof Error ? e.message : String(e)}`, 'messages');
  }
}

export function tokenize(codec: TextCodec, req: TokenizeRequest): TokenizeResult {
  const p = req.prompt;
  const tokens =
    'messages' in p
      ? encodeChat(codec, p, {
          ...(req.add_generation_prompt !== undefined ? { addGenerationPrompt: req.add_generation_prompt } : {}),
          ...(req.add_special_tokens !== undefined ? { addSpecialTokens: req.add_special_tokens } : {}),
        }).ids
      : codec.encodeText(p.text, req.add_special_tokens ?? true);
  return req.return_token_strs ? { tokens, token_strs: tokens.map((id) => codec.tokenPiece(id)) } : { tokens };
}

export function detokenize(codec: TextCodec, tokens: number[]): DetokenizeResult {
  const bad = tokens.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= codec.vocabSize);
  if (bad >= 0) {
    throw new EngineError('invalid_value', `tokens[${bad}] is ${tokens[bad]}, outside this model's vocabulary of ${codec.vocabSize} tokens.`, 'tokens');
  }
  // transformers.js refuses to decode nothing.
  return { prompt: tokens.length ? codec.decode(tokens, false) : '' };
}
