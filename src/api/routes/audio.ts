// POST /v1/audio/transcriptions and POST /v1/audio/translations: an uploaded file (multipart, as
// the openai SDK sends it) through the engine's transcribe(), answered in the response_format
// asked for, or as a stream of transcript.text events. The order is the charge's: the form is
// read and checked, the model resolved, the file's most possible cost held, and only then does
// the engine see the audio; the hold is settled to the exact duration once it is known (a
// failure or a client gone before its answer is charged nothing).
import type { Transcription, TranscriptionTextDeltaEvent, TranscriptionTextDoneEvent } from 'openai/resources/audio/transcriptions';
import type { TranscribeRequest, TranscribeResult, TranscriptDelta } from '../../engine/protocol.js';
import { reserveAudio, type AudioCharge } from '../audio/charge.js';
import { audioSecondsBound } from '../audio/duration-bound.js';
import { answeredSeconds, forwardAudio, type AudioForward } from '../../upstream/audio.js';
import { readAudioForm } from '../audio/form.js';
import { durationUsage, transcriptResponse } from '../audio/respond.js';
import { Channel } from '../channel.js';
import { type Ctx, type RouteDeps, resolveModel } from '../context.js';
import { CLIENT_GONE_STATUS, invalidRequest } from '../errors.js';
import { randomId } from '../ids.js';
import { type AudioCall, formFields, transcriptionCall, translationCall } from '../schemas/audio.js';
import { sseResponse } from '../sse.js';

export const transcriptions = (deps: RouteDeps) => audioRoute(deps, transcriptionCall);
export const translations = (deps: RouteDeps) => audioRoute(deps, translationCall);

/** Hearth bills audio by its duration, as whisper-1 is billed: the done event's usage says so in
 * the json answer's shape (the SDK's type for it has token usage only). */
type DoneEvent = Omit<TranscriptionTextDoneEvent, 'usage'> & { usage: Transcription.Duration };

type Engine = RouteDeps['runtime']['engine'];

/** What a front door's decodeAudio gives: mono 16 kHz samples. */
const SAMPLE_RATE = 16_000;

function audioRoute(deps: RouteDeps, parse: (fields: Record<string, unknown>) => AudioCall) {
  return async (c: Ctx): Promise<Response> => {
    const form = await readAudioForm(c.req.raw, deps);
    const call = parse(formFields(form));
    const { runtime } = deps;
    const model = await resolveModel(runtime, call.model, 'transcription');
    const engine = runtime.engine;
    const pool = runtime.upstreams?.pool(model.id);
    if (!pool && !engine.transcribe) throw invalidRequest(`This server's engine does not transcribe audio, so \`${model.id}\` cannot be served.`, 'model');
    const audio = new Uint8Array(await call.file.arrayBuffer());
    const charge = await reserveAudio(runtime, c.get('principal'), model.id, audio, deps.limits.audioSeconds);
    if (pool) return upstream(deps, c, { pool, deps: runtime.upstreams!.deps, signal: c.req.raw.signal, path: call.engine.task === 'translate' ? '/audio/translations' : '/audio/transcriptions', form }, audio, charge);
    // Decoded here where the front door can (the page's Web Audio), else by the engine's decoders.
    // (A decoder that throws rather than rejects must not leave the hold taken above unsettled.)
    const samples = deps.decodeAudio && (await Promise.resolve(audio).then(deps.decodeAudio).catch(() => undefined));
    const file = samples ? { audio: new Uint8Array(), samples } : { audio };
    const req: TranscribeRequest = { id: randomId('transcript-'), model: model.id, ...file, ...call.engine, max_seconds: deps.limits.audioSeconds, ...call.keepAlive };
    return call.stream ? streamed(engine, req, charge, c) : whole(engine, req, charge, call, c);
  };
}

/** Cancels the engine's work when the client goes away; returns the undo. */
function cancelOnAbort(signal: AbortSignal, cancel: () => void): () => void {
  if (signal.aborted) cancel();
  signal.addEventListener('abort', cancel, { once: true });
  return () => signal.removeEventListener('abort', cancel);
}

const cancelOf = (engine: Engine, id: string) => () => void engine.cancel(id).catch(() => undefined);

async function whole(engine: Engine, req: TranscribeRequest, charge: AudioCharge, call: AudioCall, c: Ctx): Promise<Response> {
  const signal = c.req.raw.signal;
  const stop = cancelOnAbort(signal, cancelOf(engine, req.id));
  let result: TranscribeResult;
  try {
    result = await engine.transcribe!(req);
  } catch (err) {
    await charge.settle(null);
    throw err;
  } finally {
    stop();
  }
  // A client gone before its answer never receives it: nothing is charged.
  if (signal.aborted) {
    await charge.settle(null);
    return new Response(null, { status: CLIENT_GONE_STATUS });
  }
  // The answer waits for its charge: a store that cannot take it means 503, not a free transcript.
  await charge.settle(result.duration, true);
  return transcriptResponse(call, result);
}

type Step = { kind: 'delta'; ev: TranscriptDelta } | { kind: 'done'; result: TranscribeResult } | { kind: 'error'; error: unknown };

/**
 * The stream: one transcript.text.delta event per engine delta, sent as it arrives, then
 * transcript.text.done, then the end (no [DONE]). The headers wait for the engine's first sign
 * of life, so a file it cannot decode is still a 400 in the envelope; a failure after that is
 * an error event. Charged once the transcript is done (also when the client left just before).
 */
async function streamed(engine: Engine, req: TranscribeRequest, charge: AudioCharge, c: Ctx): Promise<Response> {
  const steps = new Channel<Step>();
  let result: TranscribeResult | undefined;
  const cancel = cancelOf(engine, req.id);
  const stop = cancelOnAbort(c.req.raw.signal, cancel);
  void engine
    .transcribe!(req, (ev) => steps.push({ kind: 'delta', ev }))
    .then(
      (r) => {
        result = r;
        steps.push({ kind: 'done', result: r });
      },
      (error: unknown) => steps.push({ kind: 'error', error }),
    )
    .finally(() => {
      stop();
      steps.close();
    });
  const first = await steps.peek();
  if (first?.kind === 'error') {
    await charge.settle(null);
    throw first.error;
  }
  const logprobs = req.logprobs === true;
  return sseResponse(
    async (send) => {
      try {
        for await (const step of steps) {
          if (step.kind === 'error') throw step.error;
          if (step.kind === 'delta') {
            const { delta, logprobs: lp } = step.ev;
            if (delta === '' && !lp?.length) continue;
            const ev: TranscriptionTextDeltaEvent = { type: 'transcript.text.delta', delta, ...(logprobs ? { logprobs: lp ?? [] } : {}) };
            send(ev);
          } else {
            const r = step.result;
            const done: DoneEvent = { type: 'transcript.text.done', text: r.text, ...(logprobs ? { logprobs: r.logprobs ?? [] } : {}), usage: durationUsage(r) };
            send(done);
          }
        }
      } finally {
        await charge.settle(result ? result.duration : null);
      }
    },
    { done: false, onCancel: cancel, requestId: c.get('requestId') },
  );
}

/**
 * An upstream model's transcription: the form relayed (upstream/audio.ts), the answer passed on
 * as it came, streams included. Charged the audio's duration as this front door decodes it (the
 * same decoder a local model's file goes through), else as the upstream's answer states it, else
 * the hold's bound: never nothing for a file that was served.
 */
async function upstream(deps: RouteDeps, c: Ctx, fwd: AudioForward, audio: Uint8Array, charge: AudioCharge): Promise<Response> {
  const measured = deps.decodeAudio?.(audio).then((s) => (s ? s.length / SAMPLE_RATE : undefined)).catch(() => undefined) ?? Promise.resolve(undefined);
  let res: Response;
  try {
    res = await forwardAudio(fwd);
  } catch (err) {
    await charge.settle(null);
    throw err;
  }
  let settled = false;
  const settle = async (text: string | undefined) => {
    if (settled) return;
    settled = true;
    const seconds = (await measured) ?? (text !== undefined ? answeredSeconds(text) : undefined) ?? audioSecondsBound(audio, deps.limits.audioSeconds);
    await charge.settle(seconds, text !== undefined);
  };
  const headers = { 'content-type': res.headers.get('content-type') ?? 'application/json', 'x-request-id': c.get('requestId') };
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const text = await res.text();
    await settle(text);
    return new Response(text, { status: res.status, headers });
  }
  // A stream goes on chunk by chunk, and is charged once it has ended (or the client left).
  const body = res.body!.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: () => settle(undefined) }));
  c.req.raw.signal.addEventListener('abort', () => void settle(undefined), { once: true });
  return new Response(body, { status: res.status, headers: { ...headers, 'cache-control': 'no-cache' } });
}
