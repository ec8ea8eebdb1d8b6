// A transcript in the shape its response_format asks for, as OpenAI answers: `json` and
// `verbose_json` as JSON (translations carry no usage, and no words), `text`, `srt` and
// `vtt` as plain bodies with their own content types (the openai SDK hands them back as strings).
import type { Transcription, TranscriptionVerbose } from 'openai/resources/audio/transcriptions';
import type { Translation, TranslationVerbose } from 'openai/resources/audio/translations';
import type { TranscribeResult } from '../../engine/protocol.js';
import { jsonResponse } from '../errors.js';
import type { AudioCall } from '../schemas/audio.js';
import { toSrt, toVtt } from './subtitles.js';

export const TEXT_TYPE = 'text/plain; charset=utf-8';
export const VTT_TYPE = 'text/vtt';

/** OpenAI's duration usage: the audio's length in whole seconds, rounded up. */
export const durationUsage = (r: TranscribeResult): Transcription.Duration => ({ type: 'duration', seconds: Math.ceil(r.duration) });

/** `task` is in OpenAI's verbose answers, though its SDK's types leave it out. */
type Verbose<T> = T & { task: 'transcribe' | 'translate' };

export function transcriptBody(call: AudioCall, r: TranscribeResult): Transcription | Translation | Verbose<TranscriptionVerbose> | Verbose<TranslationVerbose> {
  const translate = call.engine.task === 'translate';
  if (call.format === 'verbose_json') {
    const common = { task: r.task, language: r.language, duration: r.duration, text: r.text, segments: r.segments };
    if (translate) return common;
    return { ...common, ...(call.words ? { words: r.words ?? [] } : {}), usage: durationUsage(r) };
  }
  if (translate) return { text: r.text };
  return { text: r.text, ...(call.engine.logprobs ? { logprobs: r.logprobs ?? [] } : {}), usage: durationUsage(r) };
}

export function transcriptResponse(call: AudioCall, r: TranscribeResult): Response {
  switch (call.format) {
    case 'text':
      return new Response(r.text, { headers: { 'content-type': TEXT_TYPE } });
    case 'srt':
      return new Response(toSrt(r.segments), { headers: { 'content-type': TEXT_TYPE } });
    case 'vtt':
      return new Response(toVtt(r.segments), { headers: { 'content-type': VTT_TYPE } });
    default:
      return jsonResponse(transcriptBody(call, r));
  }
}
