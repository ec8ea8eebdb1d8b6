import { AutoTokenizer, type PreTrainedTokenizer } from '@huggingface/transformers';
import { EngineError } from '../errors.js';
import { chatTemplateFile, type FileReader } from '../models/files.js';
import type { ChatMessage, ToolDefinition, ToolSyntax } from '../protocol.js';
import { THINK_CLOSE, THINK_OPEN, writesThinking } from '../thinking/tags.js';
import { byteLevelTokenBytes } from './byte-level.js';
import { templateMessages } from './content.js';
import { templateTakesTools, withFallbackTools } from './tool-prompt.js';
import { CALL_MARKERS, detectToolSyntax, withMistralCallIds } from './tool-syntax.js';

/**
 * A model's tokenizer and chat template (loaded by transformers.js), plus what the
 * engine needs beyond it: each token's raw bytes, and a streaming decoder that never
 * splits a UTF-8 character across two deltas.
 */
export class TextCodec {
  /** Each token's raw bytes, worked out on first use (real vocabularies hold 100k to 260k tokens). */
  private readonly bytes = new Map<number, Uint8Array>();
  private readonly pieces: string[] = [];
  private ids?: Map<string, number>;
  private readonly added = new Map<number, string>();
  private readonly special = new Set<number>();
  private readonly pieceKind: 'byte-level' | 'metaspace' | 'decode';
  /** How the chat template writes tool calls. */
  readonly toolSyntax: ToolSyntax;
  /** Special tokens that are text all the same: the tool-call markers and the think tags. */
  readonly markerIds = new Set<number>();
  /** Whether the checkpoint's files say it thinks: `<think>` and `</think>` are tokens and its template writes them. */
  readonly writesThinking: boolean;
  /** `<think>`'s token id, where it is a token. */
  readonly thinkOpenId?: number;
  /** Whether the template reads each message's content as a list of parts (a VLM's: set at load). */
  readsParts = false;

  private constructor(readonly tokenizer: PreTrainedTokenizer) {
    const json = (tokenizer as unknown as { _tokenizerJSON: TokenizerJson })._tokenizerJSON;
    this.pieceKind = usesByteLevel(json.decoder) ? 'byte-level' : usesMetaspace(json.decoder) ? 'metaspace' : 'decode';
    const vocab = tokenizer.get_vocab() as Map<string, number> | Record<string, number>;
    for (const [token, id] of vocab instanceof Map ? vocab : Object.entries(vocab)) this.pieces[id] = token;
    for (const t of json.added_tokens ?? []) {
      if (t.special) this.special.add(t.id);
      this.added.set(t.id, t.content);
      this.pieces[t.id] ??= t.content;
    }
    this.toolSyntax = detectToolSyntax(this.template);
    this.writesThinking = writesThinking((json.added_tokens ?? []).map((t) => t.content), this.template);
    // A reasoning model's think tags stay in the text even where a tokenizer marks them special, so the reply can be split.
    const markers = [...CALL_MARKERS[this.toolSyntax], ...(this.writesThinking ? [THINK_OPEN, THINK_CLOSE] : [])];
    for (const t of json.added_tokens ?? []) {
      if (markers.includes(t.content)) this.markerIds.add(t.id);
      if (t.content === THINK_OPEN) this.thinkOpenId = t.id;
    }
  }

  private get template(): string {
    const template = (this.tokenizer as unknown as { chat_template?: unknown }).chat_template;
    return typeof template === 'string' ? template : JSON.stringify(template ?? '');
  }

  /**
   * `source` is a local folder (absolute path) or a hub repo id. `files` reads the folder:
   * a chat_template.jinja there replaces tokenizer_config.json's template, which is all
   * transformers.js's tokenizer loader reads.
   */
  static async load(source: string, opts: { localOnly: boolean; files?: FileReader }): Promise<TextCodec> {
    const tokenizer = await AutoTokenizer.from_pretrained(source, { local_files_only: opts.localOnly });
    const template = opts.files ? await chatTemplateFile(opts.files, source) : undefined;
    if (template !== undefined) (tokenizer as unknown as { chat_template: unknown }).chat_template = template;
    return new TextCodec(tokenizer);
  }

  get vocabSize(): number {
    return this.pieces.length;
  }

  /**
   * Tools go to a template that takes them, or into a fallback system prompt; `kwargs`
   * become template variables, as transformers.js's `apply_chat_template` passes its extra options.
   */
  renderChat(messages: ChatMessage[], tools?: ToolDefinition[], kwargs: Record<string, unknown> = {}, addGenerationPrompt = true): string {
    const native = templateTakesTools(this.template);
    const withTools = !native ? withFallbackTools(messages, tools) : this.toolSyntax === 'mistral' ? withMistralCallIds(messages) : messages;
    const shown = templateMessages(withTools, this.readsParts);
    try {
      return this.tokenizer.apply_chat_template(shown as never, {
        ...templateVariables(kwargs),
        tokenize: false,
        add_generation_prompt: addGenerationPrompt,
        ...(native && tools?.length ? { tools: tools as never } : {}),
      }) as string;
    } catch (e) {
      // A template's raise_exception (Llama 3's one call a turn, Mistral's alternating roles) is about the conversation.
      throw new EngineError('invalid_value', `The model's chat template refused the conversation: ${e instanceof Error ? e.message : String(e)}`, 'messages');
    }
  }

  /** The chat template already wrote any special tokens it wants, so by default none are added here
   * (`/tokenize` may ask otherwise, as vLLM's does). */
  encodeChat(
    messages: ChatMessage[],
    tools?: ToolDefinition[],
    kwargs?: Record<string, unknown>,
    { addGenerationPrompt = true, addSpecialTokens = false }: { addGenerationPrompt?: boolean; addSpecialTokens?: boolean } = {},
  ): { ids: number[]; text: string } {
    const text = this.renderChat(messages, tools, kwargs, addGenerationPrompt);
    return { ids: this.tokenizer.encode(text, { add_special_tokens: addSpecialTokens }), text };
  }

  encodeText(text: string, addSpecialTokens = true): number[] {
    return this.tokenizer.encode(text, { add_special_tokens: addSpecialTokens });
  }

  /** `skipSpecialTokens: false` gives the text back as the template wrote it (`/detokenize`, as vLLM's). */
  decode(ids: number[], skipSpecialTokens = true): string {
    return this.tokenizer.decode(ids, { skip_special_tokens: skipSpecialTokens });
  }

  /** Whether the tokenizer carries a chat template (embedding models' usually do not). */
  get hasChatTemplate(): boolean {
    const template = (this.tokenizer as unknown as { chat_template?: unknown }).chat_template;
    // transformers.js keeps several named templates as an object of them.
    return typeof template === 'string' ? template.length > 0 : template != null && typeof template === 'object' && Object.keys(template).length > 0;
  }

  /** A token's id by its vocabulary string (`<|notimestamps|>`); undefined where the vocabulary has none. */
  tokenId(piece: string): number | undefined {
    if (!this.ids) {
      this.ids = new Map();
      this.pieces.forEach((p, id) => this.ids!.set(p, id));
    }
    return this.ids.get(piece);
  }

  /** The token's vocabulary string (`Ġworld`, `▁the`, `##ing`), as vLLM's `token_strs` give it. */
  tokenPiece(id: number): string {
    return this.pieces[id] ?? '';
  }

  /** Special tokens are left out of decoded text, the tool-call markers excepted. */
  isSpecial(id: number): boolean {
    return this.special.has(id) && !this.markerIds.has(id);
  }

  tokenBytes(id: number): Uint8Array {
    let b = this.bytes.get(id);
    if (!b) this.bytes.set(id, (b = this.computeBytes(id)));
    return b;
  }

  /**
   * From the vocabulary string: GPT-2 byte-level characters, SentencePiece byte-fallback
   * pieces (`<0xE2>`, one raw byte each, so split UTF-8 streams whole) and `▁` for a space;
   * other decoders decode the token alone.
   */
  private computeBytes(id: number): Uint8Array {
    const piece = this.pieces[id];
    if (piece === undefined) return new Uint8Array();
    const added = this.added.get(id);
    // Added tokens are not byte-level encoded; the non-special ones still go through the decoder (Gemma's "▁▁").
    if (added !== undefined && (this.special.has(id) || this.pieceKind !== 'metaspace')) return new TextEncoder().encode(added);
    if (this.pieceKind === 'byte-level') return byteLevelTokenBytes(piece);
    const byte = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
    if (byte) return Uint8Array.of(parseInt(byte[1]!, 16));
    if (this.pieceKind === 'metaspace') return new TextEncoder().encode(piece.replaceAll('\u2581', ' '));
    return new TextEncoder().encode(this.tokenizer.decode([id]));
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
  decoder?: Decoder | null;
  added_tokens?: { id: number; content: string; special: boolean }[];
}

interface Decoder {
  type: string;
  decoders?: Decoder[];
  pattern?: { String?: string };
}

/** SentencePiece-style decoders: Metaspace, or a Replace of ▁ by a space (Llama 2, Gemma). */
function usesMetaspace(decoder: TokenizerJson['decoder']): boolean {
  if (!decoder) return false;
  if (decoder.type === 'Metaspace') return true;
  if (decoder.type === 'Replace') return decoder.pattern?.String === '\u2581';
  return decoder.type === 'Sequence' && (decoder.decoders ?? []).some((d) => usesMetaspace(d));
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
