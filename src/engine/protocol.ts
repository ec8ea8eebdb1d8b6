// The contract between the router (main thread) and the engine (worker).
// Everything here crosses a worker boundary through comlink, so it must be
// structured-clone friendly: plain objects, arrays, typed arrays. No classes.
import type { SpeculativeMode } from './spec/draft-policy.js';

export type ModelTask = 'chat' | 'completion' | 'embedding' | 'rerank' | 'transcription';
/** `unloaded`: known, its memory free, loaded by its next request; `loading`: such a load running (`starting` is the first load of an eager start). */
export type ModelStatus = 'ready' | 'starting' | 'redeploying' | 'failed' | 'unloaded' | 'loading';
/** Why a model was unloaded: a request's `keep_alive: 0`, its expiry passed, room made for another, or an operator. */
export type UnloadReason = 'keep_alive' | 'idle' | 'evicted' | 'admin';
export type Device = 'cpu' | 'cuda' | 'webgpu' | 'wasm';

/** A catalog entry's `upstream`: an OpenAI-speaking serving cluster behind one model id. */
export interface UpstreamSpec {
  /** Base URLs ending in the API root, e.g. "http://10.0.0.5:8000/v1". */
  urls: string[];
  /** The model name the upstream knows. */
  model: string;
  /** The environment variable holding the upstream's key (never written anywhere). */
  api_key_env?: string;
  /** Time allowed for an upstream's response headers (default 30 s). */
  timeout_ms?: number;
  /** How often each URL is probed (default 5 s). */
  probe_interval_ms?: number;
}

/** One entry of models/catalog.json (or the catalog in the data dir). */
export interface CatalogEntry {
  id: string; // svc/<name>
  task: ModelTask;
  class: string; // "7B", "70B", or the real size
  context_length: number;
  /** A local folder (absolute, or relative to the catalog file) or a hub repo id. */
  source: string;
  dtype?: Partial<Record<Device, string>>;
  /** `per_audio_second`: a transcription model's price (USD a second of audio, charged on the exact duration). */
  price: { input_per_1m: number; output_per_1m: number; per_audio_second?: number };
  owned_by?: string;
  /** Served by an OpenAI-speaking cluster instead of the local engine (then `source` only describes it). */
  upstream?: UpstreamSpec;
  /** Whether the model thinks in `<think>` blocks, overriding what its files say (see engine/thinking/tags.ts). */
  reasoning?: 'think' | 'none';
  /** Speculative decoding for this model, overriding the server's `--speculative`: 'ngram' (prompt lookup), 'draft' (its `draft` model) or 'off'. */
  speculative?: SpeculativeMode;
  /** A small model of the same tokenizer (another catalog entry's id) that drafts for this one; speculation is then 'draft' unless said otherwise. */
  draft?: string;
}

export interface ModelState {
  id: string;
  task: ModelTask;
  class: string;
  context_length: number;
  status: ModelStatus;
  created: number; // unix seconds
  owned_by: string;
  /** Why it failed, or load progress while starting. */
  detail?: string;
  /** While a hub model downloads: bytes per file so far (absent otherwise). */
  download?: DownloadProgress[];
  /** A ready chat model's tool-call syntax, read from its chat template (see engine/text/tool-syntax.ts). */
  tool_syntax?: ToolSyntax;
  /** A ready model that thinks before it answers, in `<think>…</think>` (absent: it does not). */
  reasoning?: 'think';
  /** What the device needed to run this graph right, found by its self-check at load (absent: nothing). */
  workarounds?: string[];
  /** What a request may send it: ["text", "image"] for a vision-language model, else ["text"] (absent: not known, e.g. an upstream's). */
  input_modalities?: InputModality[];
  /** Unix seconds when this idle model unloads; null while a request is in flight, when kept forever, or not loaded (absent: an engine without on-demand loading). */
  expires_at?: number | null;
  /** The memory it is estimated to take loaded, in MiB: its weight files plus one full context of KV (absent: not known yet). */
  size_mb?: number;
  /** Requests running on it now (absent: an engine that does not count them). */
  in_flight?: number;
}

export type InputModality = 'text' | 'image' | 'audio';

/** How a checkpoint writes tool calls: Hermes/Qwen `<tool_call>` tags (also the fallback),
 * Llama 3.1/3.2 JSON with "parameters", Mistral `[TOOL_CALLS][…]`. */
export type ToolSyntax = 'hermes' | 'llama3_json' | 'mistral';

/** One file of a hub download, as transformers.js's progress_callback reports it. */
export interface DownloadProgress {
  file: string;
  loaded: number;
  /** 0 when the server did not say. */
  total: number;
  done: boolean;
}

/** What the engine knows about its load, for /metrics. */
export interface EngineStats {
  models: ModelStats[];
  /**
   * The memory of the thread the engine runs in (Node's worker), where the runtime reports it:
   * its JS heap in use, and what it holds outside that heap (ArrayBuffers such as the prefix
   * cache's KV, and WASM memories such as XGrammar's, which never shrink).
   */
  memory?: { heap_used_bytes: number; external_bytes: number };
}

export interface ModelStats {
  id: string;
  /** Sequences being generated (or embedding batches running) now. */
  active: number;
  /** Sequences admitted but not yet stepped (0 where the scheduler has no queue). */
  queued: number;
  /** Bytes of KV cache held, and the budget, where the engine tracks them. */
  kv_cache_bytes?: number;
  kv_cache_capacity_bytes?: number;
  /** Prompts the prefix cache holds. */
  kv_cache_entries?: number;
  /** Compiled grammars the model keeps, and how many it may (their bytes are in XGrammar's WASM
   * heap, counted in EngineStats.memory.external_bytes). */
  grammar_cache_entries?: number;
  grammar_cache_capacity?: number;
  /**
   * KV caches read back from the device to the CPU so far. WebGPU keeps them on the GPU between
   * decode steps and repacks them there when the batch changes; what it still reads back is
   * what the prefix cache stores, counted again in kv_prefix_cache_reads.
   */
  kv_device_reads?: number;
  kv_prefix_cache_reads?: number;
  /** Milliseconds the step loop has spent in each phase so far (graph, feeds, logits, repack, sample, emit, ...; see step-timings.ts). */
  step_ms?: Record<string, number>;
  /** Decode steps run so far, and the rows they decoded (decode_rows / decode_steps = mean batch). */
  decode_steps?: number;
  decode_rows?: number;
  /** Speculative decoding so far: tokens drafted, and those the model accepted. */
  spec_drafted_tokens?: number;
  spec_accepted_tokens?: number;
  /** Whether it holds its sessions now (ready, or serving while redeploying). */
  loaded?: boolean;
  /** Loads finished so far (the first included), and the seconds the last one took. */
  loads?: number;
  last_load_seconds?: number;
  /** Unloads so far, by reason. */
  unloads?: Partial<Record<UnloadReason, number>>;
}

/** An image a chat message carries: its encoded bytes (PNG, JPEG, WebP, a GIF's first frame), a data: URL's payload or a fetched URL's body. */
export interface ImageInput {
  bytes: Uint8Array;
  /** The request's `detail` (low may downscale). */
  detail?: 'auto' | 'low' | 'high';
  /** The request field it came from, for errors (`messages[1].content[0]`). */
  param: string;
}

/** Content parts in order, as chat templates of VLMs read them ({type: 'image'} where an image goes). */
export type ChatContentPart = { type: 'text'; text: string } | { type: 'image'; image: ImageInput };

export interface ChatMessage {
  role: string;
  /** Text, or parts where the message holds images (only models whose input_modalities include "image" are sent those). */
  content: string | ChatContentPart[];
  name?: string;
  /** An assistant turn's calls; `arguments` parsed, as chat templates expect it. */
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: unknown } }[];
  /** A `tool` turn: the call it answers. */
  tool_call_id?: string;
  /** An assistant turn's thinking, sent back: the chat template decides what to show of it (Qwen3's keeps it only after the last user turn). */
  reasoning_content?: string;
}

/** A tool as chat templates take it (OpenAI's shape). */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
}

export type PromptInput =
  /** `template_kwargs`: extra variables for the chat template (Qwen3's `enable_thinking`). */
  | { messages: ChatMessage[]; tools?: ToolDefinition[]; template_kwargs?: Record<string, unknown> }
  | { text: string }
  | { tokens: number[] };

export interface SamplingParams {
  /** Absent: as many as fit in the context. Given: prompt + max_tokens over the context is an error. */
  max_tokens?: number;
  temperature: number; // 0 = greedy
  top_p: number; // 1 = off
  top_k: number; // -1 or 0 = off
  min_p: number; // 0 = off
  presence_penalty: number;
  frequency_penalty: number;
  seed?: number;
  stop: string[];
  stop_token_ids: number[];
  ignore_eos: boolean;
  /** How many top alternatives to report per token; -1 = no logprobs at all. */
  logprobs: number;
  /** Constrains the output to a grammar (structured outputs, tool calls). */
  grammar?: GrammarSpec;
}

/**
 * What the output must match. `param` names the request field a grammar that cannot
 * compile is blamed on. A structural tag is XGrammar's JSON form (tool calls: free text,
 * then calls between tags).
 */
export type GrammarSpec = { param: string } & (
  | { type: 'json_object' }
  | { type: 'json_schema'; schema: string }
  | { type: 'regex'; pattern: string }
  | { type: 'ebnf'; grammar: string }
  | { type: 'structural_tag'; tag: string }
);

/**
 * How long the model stays loaded once this request has ended, in ms (Ollama's `keep_alive`):
 * 0 unloads it then, -1 keeps it; absent: the server's keep-alive.
 */
export interface KeepAlive {
  keep_alive_ms?: number;
}

export interface GenerateRequest extends KeepAlive {
  /** Unique per generation; cancel() takes it. */
  id: string;
  model: string;
  prompt: PromptInput;
  sampling: SamplingParams;
}

export interface TopLogprob {
  token: string;
  token_id: number;
  logprob: number;
  bytes: number[];
}

export interface TokenLogprob extends TopLogprob {
  top: TopLogprob[];
}

/** Sent as tokens are produced. `text` is the newly decoded text that is safe to show
 * (held back while it could still be the start of a stop string or a split UTF-8 char). */
export interface TokenEvent {
  text: string;
  token_ids: number[];
  logprobs?: TokenLogprob[];
  /** On the first event only: what the prompt cost, so a generation cut short can still be billed. */
  prompt_tokens?: number;
  cached_tokens?: number;
  /** On the first event only, from a reasoning model: where its reply starts. */
  thinking?: ThinkingStart;
}

export type FinishReason = 'stop' | 'length';

/**
 * Where a reasoning model's reply starts, read from the rendered prompt: `inside` a think block
 * the template opened, `after` one it closed (thinking switched off), or `free` to open one
 * with its first tokens.
 */
export type ThinkingStart = 'inside' | 'after' | 'free';

export interface GenerateResult {
  text: string;
  token_ids: number[];
  finish_reason: FinishReason;
  /** The stop string or stop token id that ended it; null for EOS or length. */
  matched_stop: string | number | null;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** Drafted tokens (speculative decoding) the model accepted: output tokens that took no step of their own. */
  spec_accepted_tokens?: number;
  /** The prompt's text as the engine rendered it (the chat template applied): for echo. */
  prompt_text: string;
  logprobs?: TokenLogprob[];
  /** From a reasoning model: where its reply started, and the tokens of its think block (tags included; 0 without one). */
  thinking?: ThinkingStart;
  reasoning_tokens?: number;
}

/** Prompts to count as the engine would see them (see EngineApi.countTokens). */
export interface CountRequest extends KeepAlive {
  model: string;
  prompts: PromptInput[];
}

/** A prompt to turn into tokens exactly as generate, embed and countTokens encode it, with
 * vLLM's `/tokenize` options over their defaults (see EngineApi.tokenize). */
export interface TokenizeRequest {
  model: string;
  prompt: Exclude<PromptInput, { tokens: number[] }>;
  /** Default: true for text (BOS, [CLS]…[SEP]), false for messages (the template writes its own). */
  add_special_tokens?: boolean;
  /** Messages only; default true, as generate renders them. */
  add_generation_prompt?: boolean;
  /** Also each token's vocabulary string. */
  return_token_strs?: boolean;
}

export interface TokenizeResult {
  tokens: number[];
  token_strs?: string[];
}

export interface DetokenizeRequest {
  model: string;
  tokens: number[];
}

export interface DetokenizeResult {
  /** The text, special tokens kept (vLLM's /detokenize). */
  prompt: string;
}

export interface EmbedRequest extends KeepAlive {
  model: string;
  input: (string | number[])[];
  /** The most tokens the inputs may have in all, counted after tokenizing (more: a 400 naming `input`). */
  max_total_tokens?: number;
}

export interface EmbedResult {
  /** One L2-normalised vector per input, full dimension. */
  data: Float32Array[];
  prompt_tokens: number;
}

/** Pairs to score with a cross-encoder (task `rerank`). */
export interface ScoreRequest extends KeepAlive {
  model: string;
  /** [query or text_1, document or text_2] each. */
  pairs: [string, string][];
}

export interface ScoreResult {
  /** One score a pair, in order, after the model's activation. */
  scores: number[];
  /** Tokens of every pair as scored (after truncation). */
  prompt_tokens: number;
}

/** Speech to text (task `transcription`, Whisper): one uploaded file, decoded and cut into windows by the engine. */
export interface TranscribeRequest {
  /** Unique per request; cancel() takes it. */
  id: string;
  model: string;
  /** The uploaded file's bytes as sent (wav, flac, mp3, ogg, webm, m4a): the engine decodes them. */
  audio: Uint8Array;
  /** Samples already decoded to mono 16 kHz (the page decodes with Web Audio where it can); then `audio` is ignored. */
  samples?: Float32Array;
  /** `translate`: English out, whatever the source language. */
  task: 'transcribe' | 'translate';
  /** ISO-639-1 code (or the language's English name); absent: detected from the first window. */
  language?: string;
  /** Text of a previous window, fed after `<|startofprev|>` (its last 223 tokens). */
  prompt?: string;
  /** 0 = greedy; up to 1. */
  temperature: number;
  seed?: number;
  /** `none`: plain text (`<|notimestamps|>`); `segment`: timestamp tokens; `word`: segments and words (cross-attention and DTW). */
  timestamps: 'none' | 'segment' | 'word';
  /** Each token's logprob in the result and the stream's deltas. */
  logprobs?: boolean;
  /** Longest audio accepted, in seconds (longer: invalid_value on `file`). */
  max_seconds?: number;
  /** How long the model stays loaded after this request (on-demand loading; see keep_alive). */
  keep_alive_ms?: number;
}

export interface TranscriptLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

/** As OpenAI's verbose_json writes a segment (times in seconds, from the file's start). */
export interface TranscriptSegment {
  id: number;
  /** The window's start, in 10 ms frames (openai-whisper's `seek`). */
  seek: number;
  start: number;
  end: number;
  /** As decoded: keeps its leading space. */
  text: string;
  tokens: number[];
  temperature: number;
  avg_logprob: number;
  compression_ratio: number;
  no_speech_prob: number;
}

export interface TranscriptWord {
  word: string;
  start: number;
  end: number;
}

/** Sent as tokens are decoded (a stream's `transcript.text.delta`). */
export interface TranscriptDelta {
  delta: string;
  logprobs?: TranscriptLogprob[];
}

export interface TranscribeResult {
  /** Windows' texts, each trimmed, joined by one space. */
  text: string;
  /** The language's English name, lower case ("english"): the one asked or the one detected. */
  language: string;
  /** The audio's exact duration in seconds (charged on it). */
  duration: number;
  task: 'transcribe' | 'translate';
  segments: TranscriptSegment[];
  /** Only when `timestamps` is `word`. */
  words?: TranscriptWord[];
  /** Only when `logprobs` was asked. */
  logprobs?: TranscriptLogprob[];
}

/** What the worker exposes. The engine client in the main thread calls it through comlink. */
export interface EngineApi {
  /** Starts loading every entry; returns at once. Progress shows in models(). */
  load(entries: CatalogEntry[]): Promise<void>;
  models(): Promise<ModelState[]>;
  generate(req: GenerateRequest, onToken: (ev: TokenEvent) => void): Promise<GenerateResult>;
  cancel(id: string): Promise<void>;
  embed(req: EmbedRequest): Promise<EmbedResult>;
  /** Scores each pair with a `rerank` model (a cross-encoder). */
  score(req: ScoreRequest): Promise<ScoreResult>;
  /** Speech to text with a `transcription` model; `onDelta` gets the text as it is decoded. Optional: without it, the audio routes answer 400. */
  transcribe?(req: TranscribeRequest, onDelta?: (ev: TranscriptDelta) => void): Promise<TranscribeResult>;
  dispose(): Promise<void>;

  /** Each prompt's token count exactly as generate (chat template applied) or embed (a text
   * input) would see it, so that admission can hold a request's real most possible cost.
   * Refuses what generate would refuse for the same reason (a template's own refusal, an
   * unknown or unready model). Optional: without it, admission bounds prompts by the context. */
  countTokens?(req: CountRequest): Promise<number[]>;
  /** A prompt's tokens through the same encoding (any local model's tokenizer; messages
   * through the chat template, refused with invalid_value on `messages` where there is none).
   * Optional like countTokens: without it, /tokenize and /detokenize answer 400. */
  tokenize?(req: TokenizeRequest): Promise<TokenizeResult>;
  /** Token ids back to text; an id outside the vocabulary is invalid_value on `tokens`. */
  detokenize?(req: DetokenizeRequest): Promise<DetokenizeResult>;

  // Model operations (optional: engines without them serve a fixed catalog).

  /** Starts serving a new model (status `starting`, then `ready` or `failed`); model_exists
   * (invalid_value) if the id is taken. Resolves with its state at once. */
  add?(entry: CatalogEntry): Promise<ModelState>;
  /** Stops serving a model: new requests get model_not_found at once; requests in flight
   * finish first, then its sessions are released. */
  remove?(id: string): Promise<void>;
  /** Loads a fresh instance (from `entry` if given, else the same entry) while the old one
   * finishes what it is doing; status `redeploying` (new requests get model_not_ready) until
   * the new one is ready. Resolves with the state at once; models() shows the outcome. */
  redeploy?(id: string, entry?: CatalogEntry): Promise<ModelState>;
  /** Load figures per model, for metrics. */
  stats?(): Promise<EngineStats>;

  // Models on demand (optional: engines without them hold every model while they run).

  /** Loads a model now, making room by the usual rule (least recently used idle models go
   * first), and resolves with its state once it is ready; a wait past the load timeout is
   * model_not_ready with retry-after. An admin load with no request after it expires after the
   * server's keep-alive. */
  loadModel?(id: string): Promise<ModelState>;
  /** Unloads a model (reason `admin`) once its requests in flight have ended, or at once with
   * `force` (they end with model_not_ready); resolves with its state, `unloaded`. */
  unloadModel?(id: string, opts?: { force?: boolean }): Promise<ModelState>;
}
