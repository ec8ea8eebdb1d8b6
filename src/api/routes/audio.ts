// POST /v1/audio/transcriptions and POST /v1/audio/translations: an uploaded file (multipart, as
// the openai SDK sends it) through the engine's transcribe(), answered in the response_format
// asked for, or as a stream of transcript.text events. The order is the charge's: the form is
// read and checked, the model resolved, the file's most possible cost held, and only then does
// the engine see the audio; the hold is settled to the exact duration once it is known (a
// failure or a client gone before its answer is charged nothing).
import type { Transcription, TranscriptionTextDeltaEvent, TranscriptionTextDoneEvent } from 'openai/resources/audio/transcriptions';
import type { TranscribeRequest, TranscribeResult, TranscriptDelta } from '../../engine/protocol.js';
import { reserveAudio, type AudioCharge } from '../audio/charge.js';
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

function audioRoute(deps: RouteDeps, parse: (fields: Record<string, unknown>) => AudioCall) {
  return async (c: Ctx): Promise<Response> => {
    const call = parse(formFields(await readAudioForm(c.req.raw, deps)));
    const { runtime } = deps;
    const model = await resolveModel(runtime, call.model, 'transcription');
    if (runtime.upstreams?.pool(model.id)) {
      // TODO(issue 46): pass the multipart body through to the upstream's same path (model rewritten);
      // upstream/forward.ts sends JSON bodies only so far.
      throw invalidRequest(`The model \`${model.id}\` is served by an upstream engine, and audio is not forwarded to upstreams yet.`, 'model');
    }
    const engine = runtime.engine;
    if (!engine.transcribe) throw invalidRequest(`This server's engine does not transcribe audio, so \`${model.id}\` cannot be served.`, 'model');
    const audio = new Uint8Array(await call.file.arrayBuffer());
    const charge = await reserveAudio(runtime, c.get('principal'), model.id, audio, deps.limits.audioSeconds);
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
