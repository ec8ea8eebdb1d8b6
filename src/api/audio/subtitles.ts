// SRT and WebVTT bodies from a transcript's segments, written as openai-whisper's WriteSRT and
// WriteVTT write them (and OpenAI's API answers): each segment's text trimmed, with "-->" turned
// into "->" so a text can never pass for a cue's timing line. Unlike openai-whisper's VTT
// writer, which leaves out the hours under an hour, both formats always carry them, as
// OpenAI's answers do (HH:MM:SS.mmm), which every player reads.
import type { TranscriptSegment } from '../../engine/protocol.js';

type Timed = Pick<TranscriptSegment, 'start' | 'end' | 'text'>;

/** `HH:MM:SS<marker>mmm`, rounded to the millisecond as openai-whisper's format_timestamp rounds. */
export function formatTimestamp(seconds: number, marker: ',' | '.'): string {
  let ms = Math.round(Math.max(0, seconds) * 1000);
  const h = Math.floor(ms / 3_600_000);
  ms -= h * 3_600_000;
  const m = Math.floor(ms / 60_000);
  ms -= m * 60_000;
  const s = Math.floor(ms / 1000);
  ms -= s * 1000;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(h)}:${two(m)}:${two(s)}${marker}${String(ms).padStart(3, '0')}`;
}

const cueText = (text: string) => text.trim().replace(/-->/g, '->');

/** Numbered blocks: `1\n00:00:00,000 --> 00:00:02,500\ntext\n\n`. */
export function toSrt(segments: readonly Timed[]): string {
  return segments.map((s, i) => `${i + 1}\n${formatTimestamp(s.start, ',')} --> ${formatTimestamp(s.end, ',')}\n${cueText(s.text)}\n\n`).join('');
}

/** `WEBVTT\n\n` then `00:00:00.000 --> 00:00:02.500\ntext\n\n` a segment. */
export function toVtt(segments: readonly Timed[]): string {
  return 'WEBVTT\n\n' + segments.map((s) => `${formatTimestamp(s.start, '.')} --> ${formatTimestamp(s.end, '.')}\n${cueText(s.text)}\n\n`).join('');
}
