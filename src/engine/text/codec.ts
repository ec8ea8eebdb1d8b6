import { AutoTokenizer, type PreTrainedTokenizer } from '@huggingface/transformers';
import type { ChatMessage } from '../protocol.js';
import { byteLevelTokenBytes } from './byte-level.js';

/**
 * A model's tokenizer and chat template (loaded by transformers.js), plus what the
 * engine needs beyond it: each token's raw bytes, and a streaming decoder that never
 * splits a UTF-8 character across two deltas.
 */
export class TextCodec {
  private readonly bytes: Uint8Array[] = [];
  private readonly special = new Set<number>();

  private constructor(readonly tokenizer: PreTrainedTokenizer) {
    const json = (tokenizer as unknown as { _tokenizerJSON: TokenizerJson })._tokenizerJSON;
    const byteLevel = usesByteLevel(json.decoder);
    const vocab = tokenizer.get_vocab() as Map<string, number> | Record<string, number>;
    const entries = vocab instanceof Map ? [...vocab] : Object.entries(vocab);
    for (const [token, id] of entries) {
      this.bytes[id] = byteLevel ? byteLevelTokenBytes(token) : new TextEncoder().encode(tokenizer.decode([id]));
    }
    for (const t of json.added_tokens ?? []) {
      if (t.special) this.special.add(t.id);
      this.bytes[t.id] = new TextEncoder().encode(t.content);
    }
  }

  /** `source` is a local folder (absolute path) or a hub repo id. */
  static async load(source: string, opts: { localOnly: boolean }): Promise<TextCodec> {
    const tokenizer = await AutoTokenizer.from_pretrained(source, { local_files_only: opts.localOnly });
    return new TextCodec(tokenizer);
  }

  get vocabSize(): number {
    return this.bytes.length;
  }

  /** `kwargs` become template variables, as transformers.js's `apply_chat_template` passes its extra options. */
  renderChat(messages: ChatMessage[], kwargs: Record<string, unknown> = {}): string {
    return this.tokenizer.apply_chat_template(messages as never, {
      ...templateVariables(kwargs),
      tokenize: false,
      add_generation_prompt: true,
    }) as string;
  }

  /** The chat template already wrote any special tokens it wants, so none are added here. */
  encodeChat(messages: ChatMessage[], kwargs?: Record<string, unknown>): { ids: number[]; text: string } {
    const text = this.renderChat(messages, kwargs);
    return { ids: this.tokenizer.encode(text, { add_special_tokens: false }), text };
  }

  encodeText(text: string): number[] {
    return this.tokenizer.encode(text);
  }

  decode(ids: number[]): string {
    return this.tokenizer.decode(ids, { skip_special_tokens: true });
  }

  isSpecial(id: number): boolean {
    return this.special.has(id);
  }

  tokenBytes(id: number): Uint8Array {
    return this.bytes[id] ?? new Uint8Array();
  }

  /** The token's text as a client sees it in logprobs (a split UTF-8 char shows as U+FFFD). */
  tokenText(id: number): string {
    return new TextDecoder().decode(this.tokenBytes(id));
  }

  streamDecoder(): StreamDecoder {
    return new StreamDecoder(this);
  }
}

/** Turns tokens into text as they come; holds incomplete UTF-8 until it completes. */
export class StreamDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  constructor(private readonly codec: Pick<TextCodec, 'isSpecial' | 'tokenBytes'>) {}

  push(id: number): string {
    if (this.codec.isSpecial(id)) return '';
    return this.utf8.decode(this.codec.tokenBytes(id), { stream: true });
  }

  end(): string {
    return this.utf8.decode();
  }
}

interface TokenizerJson {
  decoder?: { type: string; decoders?: { type: string }[] } | null;
  added_tokens?: { id: number; content: string; special: boolean }[];
}

function usesByteLevel(decoder: TokenizerJson['decoder']): boolean {
  if (!decoder) return false;
  if (decoder.type === 'ByteLevel') return true;
  return decoder.type === 'Sequence' && (decoder.decoders ?? []).some((d) => d.type === 'ByteLevel');
}

/** apply_chat_template's own options: a request's template variables must not set them. */
const TEMPLATE_OPTIONS = new Set(['chat_template', 'tools', 'documents', 'tokenize', 'padding', 'truncation', 'max_length', 'return_tensor', 'return_dict', 'tokenizer_kwargs', 'add_generation_prompt', 'messages']);

function templateVariables(kwargs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(kwargs).filter(([k]) => !TEMPLATE_OPTIONS.has(k)));
}
