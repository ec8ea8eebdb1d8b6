// One decoded window as OpenAI's verbose_json tells it: its text, its segments (split at
// consecutive timestamp tokens as openai-whisper splits them; a segment still open at the
// window's end closes there, since each window is decoded once) and, when asked, its words
// (token times from the cross-attention, grouped into words by transformers.js's own
// WhisperTokenizer._decode_asr, so word splitting equals the reference's).
import type { TranscribeRequest, TranscriptSegment, TranscriptWord } from '../protocol.js';
import type { TextCodec } from '../text/codec.js';
import type { WindowJob } from './decode-windows.js';
import { tokenTimes } from './token-times.js';
import type { WhisperConfig } from './whisper-config.js';

const PRECISION = 0.02;

export interface WindowTranscript {
  text: string;
  segments: Omit<TranscriptSegment, 'id'>[];
  words?: TranscriptWord[];
}

interface AsrTokenizer {
  _decode_asr(chunks: { tokens: number[]; token_timestamps?: number[]; stride: number[] }[], opts: { return_timestamps: boolean | 'word'; time_precision: number; force_full_sequences: boolean }): [string, { chunks?: { text: string; timestamp: [number | null, number | null] }[] }];
}

export async function windowTranscript(job: WindowJob, codec: TextCodec, config: WhisperConfig, req: Pick<TranscribeRequest, 'timestamps'>): Promise<WindowTranscript> {
  const { eos, timestampBegin } = config.ids;
  const sampled = job.sampled ?? [];
  const tokens = sampled.at(-1) === eos ? sampled.slice(0, -1) : sampled;
  const decodeText = (ids: number[]) => codec.decode(ids.filter((t) => t < eos));
  const fullText = decodeText(tokens);
  const logprobs = job.tokenLogprobs ?? [];
  const common = {
    seek: Math.round(job.start * 100),
    temperature: job.temperature ?? 0,
    avg_logprob: logprobs.length ? logprobs.reduce((a, b) => a + b, 0) / logprobs.length : 0,
    compression_ratio: await compressionRatio(fullText),
    no_speech_prob: job.noSpeechProb ?? 0,
  };
  const at = (seconds: number) => round2(job.start + seconds);
  const segment = (slice: number[], start: number, end: number) => ({ ...common, start: at(start), end: at(end), text: decodeText(slice), tokens: slice });
  const segments: WindowTranscript['segments'] = [];
  const isTime = (t: number) => t >= timestampBegin;
  const timeOf = (t: number) => (t - timestampBegin) * PRECISION;
  if (req.timestamps === 'none') {
    if (fullText.trim()) segments.push(segment(tokens, 0, job.seconds));
  } else {
    let last = 0;
    for (let i = 1; i < tokens.length; i++) {
      if (isTime(tokens[i]!) && isTime(tokens[i - 1]!)) {
        const slice = tokens.slice(last, i);
        segments.push(segment(slice, timeOf(slice[0]!), timeOf(slice.at(-1)!)));
        last = i;
      }
    }
    // What follows the last pair: a segment closed by its own end timestamp, or still open at the window's end.
    const rest = tokens.slice(last);
    if (rest.some((t) => !isTime(t))) {
      const start = isTime(rest[0]!) ? timeOf(rest[0]!) : (segments.at(-1) ? timeOf(segments.at(-1)!.tokens.at(-1)!) : 0);
      const end = rest.length > 1 && isTime(rest.at(-1)!) ? timeOf(rest.at(-1)!) : job.seconds;
      segments.push(segment(rest, start, Math.max(start, end)));
    }
  }
  const out: WindowTranscript = { text: fullText.trim(), segments };
  if (req.timestamps === 'word' && job.weights) out.words = windowWords(job, codec, config);
  return out;
}

function windowWords(job: WindowJob, codec: TextCodec, config: WhisperConfig): TranscriptWord[] {
  const times = tokenTimes(job.weights!, job.prompt.length, config.medianFilterWidth, PRECISION).map(round2);
  const sampled = job.sampled!;
  const tokenizer = codec.tokenizer as unknown as AsrTokenizer;
  const [, { chunks = [] }] = tokenizer._decode_asr([{ tokens: sampled, token_timestamps: times.slice(0, sampled.length), stride: [job.seconds, 0, 0] }], {
    return_timestamps: 'word',
    time_precision: PRECISION,
    force_full_sequences: false,
  });
  return chunks.map((c) => ({ word: c.text, start: round2(job.start + (c.timestamp[0] ?? 0)), end: round2(job.start + (c.timestamp[1] ?? c.timestamp[0] ?? job.seconds)) }));
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** openai-whisper's compression_ratio: the text's UTF-8 bytes over their zlib-compressed bytes (a looping reply compresses well). */
async function compressionRatio(text: string): Promise<number> {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length === 0) return 0;
  const compressed = await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate'))).arrayBuffer();
  return bytes.length / compressed.byteLength;
}
