// A transcription with stream=true, with a stub engine: bare `data: {json}` frames, one
// transcript.text.delta per engine delta as it is decoded (never held back), then
// transcript.text.done with the text and its usage, then the end (no [DONE]); logprobs when asked;
// a failure after the headers as an error event; a client that leaves cancels the engine.
import { describe, expect, test } from 'vitest';
import { validateAgainst } from '../helpers/openapi.js';
import { audioFields, setupAudio } from './audio-harness.js';
import { parseEvents, readEvents } from './harness.js';
import { STUB_DELTAS } from './stub-engine.js';

const T = '/v1/audio/transcriptions';
const TEXT = 'Hello world. How --> are you?';

async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('a streamed transcription with a stub engine', () => {
  test('sends a delta event per decoded piece, then the done event with text and usage, then ends without [DONE]', async () => {
    const { postForm, engine } = setupAudio();
    const res = await postForm(T, audioFields({ stream: 'true' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const raw = await res.text();
    expect(raw).not.toContain('[DONE]');
    expect(raw).not.toMatch(/^event:/m);
    const events = parseEvents(raw) as Record<string, unknown>[];
    expect(events).toEqual([
      ...STUB_DELTAS.map((delta) => ({ type: 'transcript.text.delta', delta })),
      { type: 'transcript.text.done', text: TEXT, usage: { type: 'duration', seconds: 5 } },
    ]);
    expect(engine.transcribeCalls[0]!.timestamps).toBe('none');
    for (const ev of events.slice(0, -1)) expect(validateAgainst('TranscriptTextDeltaEvent', ev)).toEqual([]);
    // The done event's usage is the duration kind, as the json answer's (the schema's done event names token usage only).
    const { usage, ...done } = events.at(-1)!;
    expect(validateAgainst('TranscriptTextDoneEvent', done)).toEqual([]);
    expect(validateAgainst('TranscriptTextUsageDuration', usage)).toEqual([]);
  });

  test('with include[]=logprobs every delta and the done event carry logprobs', async () => {
    const { postForm } = setupAudio();
    const events = (await readEvents(await postForm(T, audioFields({ stream: 'true', 'include[]': 'logprobs', response_format: 'text' })))) as Record<string, any>[];
    expect(events).toHaveLength(STUB_DELTAS.length + 1);
    events.slice(0, -1).forEach((ev, i) => expect(ev.logprobs).toEqual([{ token: STUB_DELTAS[i], logprob: -0.2, bytes: [...new TextEncoder().encode(STUB_DELTAS[i])] }]));
    expect(events.at(-1)!.logprobs).toHaveLength(STUB_DELTAS.length);
    for (const ev of events.slice(0, -1)) expect(validateAgainst('TranscriptTextDeltaEvent', ev)).toEqual([]);
    const { usage: _u, ...done } = events.at(-1)!;
    expect(validateAgainst('TranscriptTextDoneEvent', done)).toEqual([]);
  });

  test('hands each delta on as the engine decodes it, not when the transcript is done', async () => {
    const { postForm, engine } = setupAudio();
    engine.transcribeScript = () => ({ delayMs: 60 });
    const res = await postForm(T, audioFields({ stream: 'true' }));
    const reader = res.body!.getReader();
    const first = await reader.read();
    // The first frame is out while the engine still has five deltas to decode.
    expect(parseEvents(new TextDecoder().decode(first.value))).toEqual([{ type: 'transcript.text.delta', delta: ' Hello' }]);
    expect(engine.finished.size).toBe(0);
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(parseEvents(rest).at(-1)).toMatchObject({ type: 'transcript.text.done' });
  });

  test('a failure after the headers is an error event that names no internals, and the stream ends', async () => {
    const { postForm, engine, access } = setupAudio();
    engine.transcribeScript = () => ({ failAfter: 2 });
    const res = await postForm(T, audioFields({ stream: 'true' }));
    expect(res.status).toBe(200);
    const events = (await readEvents(res)) as Record<string, any>[];
    expect(events.slice(0, 2).map((e) => e.delta)).toEqual([' Hello', ' world.']);
    expect(events).toHaveLength(3);
    expect(events[2]!.error).toMatchObject({ type: 'server_error', code: 'server_error' });
    expect(JSON.stringify(events[2])).not.toContain('/secret/');
    // Not done: nothing charged.
    await eventually(() => access.holds.every((h) => h.settled));
    expect(access.records).toEqual([]);
  });

  test('a client that goes away cancels the engine\'s work, and an unfinished transcript is not charged', async () => {
    const { postForm, engine, access } = setupAudio();
    engine.transcribeScript = () => ({ delayMs: 50 });
    const res = await postForm(T, audioFields({ stream: 'true' }));
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    await eventually(() => engine.cancelled.length === 1 && access.holds[0]!.settled);
    expect(engine.cancelled[0]).toBe(engine.transcribeCalls[0]!.id);
    expect(access.records).toEqual([]);
  });

  test('a client that aborts a whole (non-stream) request cancels the engine and is not charged', async () => {
    const { postForm, engine, access } = setupAudio();
    engine.transcribeScript = () => ({ delayMs: 50 });
    const ac = new AbortController();
    const pending = postForm(T, audioFields(), { signal: ac.signal });
    await eventually(() => engine.transcribeCalls.length === 1);
    ac.abort();
    await Promise.resolve(pending).catch(() => undefined);
    await eventually(() => engine.cancelled.length === 1 && access.holds[0]!.settled);
    expect(access.records).toEqual([]);
  });
});
