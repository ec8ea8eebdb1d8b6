// The multipart forms of POST /v1/audio/transcriptions and /v1/audio/translations, as the openai
// SDK writes them: every value a string (numbers and booleans too), arrays as repeated `key[]`
// fields (the bare repeated `key` also read, as OpenAI reads it), objects as `key[sub]`, the
// file a part with a filename. Unknown fields are ignored as OpenAI ignores them, except those
// that would change the answer and that Hearth does not act on (diarization, server VAD
// chunking, gpt-transcribe's language lists and keywords): a 400 naming them.
import type { AudioResponseFormat } from 'openai/resources/audio/audio';
import type { TranscriptionInclude } from 'openai/resources/audio/transcriptions';
import { z } from 'zod';
import type { KeepAlive, TranscribeRequest } from '../../engine/protocol.js';
import { invalidRequest } from '../errors.js';
import { keepAliveOf } from '../keep-alive.js';
import { parseBody, pick } from './common.js';

/** Fields read as lists whichever spelling is sent: `timestamp_granularities[]` or `timestamp_granularities`. */
const LISTS = new Set(['timestamp_granularities', 'include']);

/** A form's fields as a plain object: lists as arrays, `key[sub]` as objects, a field sent twice as an array (which a single-valued field refuses). */
export function formFields(form: FormData): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of form.entries()) {
    const open = key.indexOf('[');
    const name = open > 0 ? key.slice(0, open) : key;
    const rest = open > 0 ? key.slice(open) : '';
    const prev = out[name];
    if (rest !== '' && rest !== '[]') {
      // `chunking_strategy[type]`: an object (its inner brackets kept as they are).
      const obj = prev && typeof prev === 'object' && !Array.isArray(prev) && !(prev instanceof Blob) ? (prev as Record<string, unknown>) : {};
      obj[rest.slice(1, rest.indexOf(']'))] = value;
      out[name] = obj;
    } else if (rest === '[]' || LISTS.has(name)) {
      out[name] = [...(Array.isArray(prev) ? prev : prev === undefined ? [] : [prev]), value];
    } else {
      out[name] = prev === undefined ? value : [...(Array.isArray(prev) ? prev : [prev]), value];
    }
  }
  return out;
}

const NUMBER = /^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/;
const formNumber = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(NUMBER, { error: 'expected a number' })
    .transform(Number)
    .pipe(z.number().min(min).max(max));
const formBoolean = z.enum(['true', 'false'], { error: 'expected "true" or "false"' }).transform((v) => v === 'true');
const FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const satisfies readonly AudioResponseFormat[];
const INCLUDE = ['logprobs'] as const satisfies readonly TranscriptionInclude[];

export type AudioFormat = (typeof FORMATS)[number];

const shared = {
  model: z.string().min(1),
  prompt: z.string().optional(),
  response_format: z.enum(FORMATS).optional(),
  temperature: formNumber(0, 1).optional(),
  stream: formBoolean.optional(),
};

export const transcriptionFormSchema = z.object({
  ...shared,
  // ISO-639-1 ("en"), or the language's English name: the engine refuses one its model does not know.
  language: z.string().trim().min(1).max(32).optional(),
  timestamp_granularities: z.array(z.enum(['segment', 'word'])).optional(),
  include: z.array(z.enum(INCLUDE)).optional(),
});

export const translationFormSchema = z.object(shared);

/** What the route does with one request: the engine's part and how to answer. */
export interface AudioCall {
  file: Blob;
  model: string;
  format: AudioFormat;
  stream: boolean;
  engine: Pick<TranscribeRequest, 'task' | 'language' | 'prompt' | 'temperature' | 'timestamps' | 'logprobs'>;
  /** verbose_json's `words`. */
  words: boolean;
  /** How long the model stays loaded after this request (`keep_alive`, as every model route takes it). */
  keepAlive: KeepAlive;
}

/** Fields OpenAI defines whose effect Hearth does not give: refused, never silently dropped. */
const NOT_ACTED_ON: Record<string, string> = {
  known_speaker_names: 'speaker diarization (gpt-4o-transcribe-diarize) is not served here',
  known_speaker_references: 'speaker diarization (gpt-4o-transcribe-diarize) is not served here',
  languages: 'lists of possible languages (gpt-transcribe) are not served here; send one `language`',
  keywords: 'keywords (gpt-transcribe) are not served here; a `prompt` can carry the words instead',
};

function fileOf(fields: Record<string, unknown>): Blob {
  const file = fields.file;
  if (file === undefined) throw invalidRequest("Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
  if (!(file instanceof Blob)) {
    throw invalidRequest("'file' must be an uploaded file (a multipart part with a filename), sent once; it was sent as a text field or more than once.", 'file');
  }
  if (file.size === 0) throw invalidRequest('The uploaded file is empty: it holds no audio.', 'file');
  return file;
}

/** A transcription's form, checked: every 400 names its field. */
export function transcriptionCall(fields: Record<string, unknown>): AudioCall {
  const file = fileOf(fields);
  for (const [name, why] of Object.entries(NOT_ACTED_ON)) {
    if (fields[name] !== undefined) throw invalidRequest(`'${name}' is not supported: ${why}.`, name);
  }
  // "auto" is what Hearth does anyway (long audio cut at its quietest points); server VAD is not.
  const chunking = fields.chunking_strategy;
  if (chunking !== undefined && chunking !== 'auto') {
    throw invalidRequest("'chunking_strategy' supports only \"auto\" here: long audio is cut at its quietest 100 ms within each 30 s window.", 'chunking_strategy');
  }
  const b = parseBody(transcriptionFormSchema, fields);
  const format = pick(b.response_format, 'json');
  const stream = b.stream === true;
  const granularities = new Set(b.timestamp_granularities ?? []);
  if (granularities.size && format !== 'verbose_json') {
    throw invalidRequest(`'timestamp_granularities' is only supported with response_format "verbose_json" (got "${format}").`, 'timestamp_granularities');
  }
  if (stream && format !== 'json' && format !== 'text') {
    throw invalidRequest(`A stream sends transcript.text events: response_format "${format}" cannot be streamed; use "json" or "text", or leave out stream.`, 'response_format');
  }
  const logprobs = (b.include ?? []).includes('logprobs');
  if (logprobs && !stream && format !== 'json') {
    throw invalidRequest(`'include' with "logprobs" is only supported with response_format "json" or with stream (got "${format}").`, 'include');
  }
  const words = granularities.has('word');
  const timed = format === 'verbose_json' || format === 'srt' || format === 'vtt';
  return {
    file,
    model: b.model,
    format,
    stream,
    words,
    keepAlive: keepAliveOf(fields),
    engine: {
      task: 'transcribe',
      ...(b.language !== undefined ? { language: b.language.toLowerCase() } : {}),
      ...(b.prompt !== undefined && b.prompt.trim() !== '' ? { prompt: b.prompt } : {}),
      temperature: pick(b.temperature, 0),
      timestamps: words ? 'word' : timed ? 'segment' : 'none',
      ...(logprobs ? { logprobs: true } : {}),
    },
  };
}

/** A translation's form (English out; no language, granularities, include or stream). */
export function translationCall(fields: Record<string, unknown>): AudioCall {
  const file = fileOf(fields);
  const b = parseBody(translationFormSchema, fields);
  if (b.stream === true) throw invalidRequest('Translations are not streamed: leave out stream, or use /v1/audio/transcriptions.', 'stream');
  const format = pick(b.response_format, 'json');
  const timed = format === 'verbose_json' || format === 'srt' || format === 'vtt';
  return {
    file,
    model: b.model,
    format,
    stream: false,
    words: false,
    keepAlive: keepAliveOf(fields),
    engine: {
      task: 'translate',
      ...(b.prompt !== undefined && b.prompt.trim() !== '' ? { prompt: b.prompt } : {}),
      temperature: pick(b.temperature, 0),
      timestamps: timed ? 'segment' : 'none',
    },
  };
}
