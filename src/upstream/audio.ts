// Speech to text on an upstream model: the caller's form goes on as it came, with the model field
// the upstream's name and the upstream's key (never the caller's); the answer (json, text, srt,
// vtt, or a stream of transcript.text events) comes back as the upstream gave it. Whisper's
// answers name no model, so there is nothing to rewrite on the way back. What it costs is the
// audio's duration: the caller's route measures it (see routes/audio.ts), this only relays.
import { forward, type ForwardDeps } from './forward.js';
import type { UpstreamPool } from './pool.js';

export interface AudioForward {
  pool: UpstreamPool;
  deps: ForwardDeps;
  signal?: AbortSignal;
  /** `/audio/transcriptions` or `/audio/translations`. */
  path: string;
  form: FormData;
}

/** The upstream's answer, its body unread; a 4xx comes as Hearth's envelope, a 5xx or a refusal as 502 (forward.ts). */
export function forwardAudio(req: AudioForward): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of req.form) form.append(name, name === 'model' ? req.pool.spec.model : value);
  return forward(req.pool, req.path, form, req.deps, req.signal);
}

/** Seconds an upstream's json or verbose_json answer says the audio lasted, where it says. */
export function answeredSeconds(text: string): number | undefined {
  try {
    const v = JSON.parse(text) as { duration?: unknown; usage?: { type?: unknown; seconds?: unknown } };
    if (typeof v.duration === 'number') return v.duration;
    if (v.usage?.type === 'duration' && typeof v.usage.seconds === 'number') return v.usage.seconds;
  } catch {
    // text, srt or vtt: no figure in it
  }
  return undefined;
}
