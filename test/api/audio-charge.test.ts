// What the audio routes charge, with a stub engine (a 4.25 s transcript whatever the file) and
// the stub access: the hold before the engine runs is the most the file can cost (a WAV's bound
// from its header, any other file --max-audio-seconds × the price a second); the settled charge
// is the exact duration × the price; a refused or failed request is charged nothing; a request
// counts once for the rate limit.
import { describe, expect, test } from 'vitest';
import { audioSecondsBound, wavFormat } from '../../src/api/audio/duration-bound.js';
import { audioFields, PER_SECOND, setupAudio, wav, WHISPER } from './audio-harness.js';

const T = '/v1/audio/transcriptions';
const TR = '/v1/audio/translations';

async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe('charging the audio routes by the second, with a stub engine', () => {
  test('settles the exact duration × per_audio_second, held no lower beforehand, in a usage line of no tokens', async () => {
    const { postForm, access } = setupAudio();
    const file = new Blob([wav(5) as Uint8Array<ArrayBuffer>]);
    expect((await postForm(T, audioFields({ file }))).status).toBe(200);
    expect(access.records).toHaveLength(1);
    expect(access.records[0]!.usage).toEqual({ model: WHISPER, prompt_tokens: 0, completion_tokens: 0, cost_usd: 4.25 * PER_SECOND });
    expect(access.holds[0]!.req).toEqual({ model: WHISPER, maxCostUsd: expect.any(Number) });
    // A 5 s WAV: held for its bytes' length at its rate, rounded up (its header's 44 bytes make it 6 s), plus a second; not an hour.
    expect(access.holds[0]!.req.maxCostUsd).toBeCloseTo(7 * PER_SECOND, 12);
    expect(access.holds[0]!.req.maxCostUsd).toBeGreaterThanOrEqual(access.records[0]!.usage.cost_usd);
    expect(access.holds[0]!.settled).toBe(true);
  });

  test('holds --max-audio-seconds × the price for a file whose length its bytes do not bound', async () => {
    const { postForm, access } = setupAudio({ maxAudioSeconds: 120 });
    const opus = new Blob([new TextEncoder().encode('OggS' + 'x'.repeat(500))]);
    expect((await postForm(T, audioFields({ file: opus }))).status).toBe(200);
    expect(access.holds[0]!.req.maxCostUsd).toBeCloseTo(120 * PER_SECOND, 12);
    expect(access.records[0]!.usage.cost_usd).toBeCloseTo(4.25 * PER_SECOND, 12);
  });

  test('charges translations and streams the same way, a stream once its transcript is done', async () => {
    const { postForm, access } = setupAudio();
    await (await postForm(TR, audioFields({ response_format: 'srt' }))).text();
    await (await postForm(T, audioFields({ stream: 'true' }))).text();
    await eventually(() => access.records.length === 2);
    expect(access.records.map((r) => r.usage.cost_usd)).toEqual([4.25 * PER_SECOND, 4.25 * PER_SECOND]);
  });

  test('charges nothing for a request refused before or by the engine', async () => {
    const { postForm, access } = setupAudio({ maxAudioSeconds: 3 });
    expect((await postForm(T, audioFields({ response_format: 'bad' }))).status).toBe(400);
    expect((await postForm(T, audioFields())).status).toBe(400); // 4.25 s past the 3 s limit
    expect(access.holds).toHaveLength(1); // the form's refusal held nothing
    expect(access.holds.every((h) => h.settled)).toBe(true);
    expect(access.records).toEqual([]);
  });

  test('refuses with 429 insufficient_quota when the hold does not fit, before the engine runs', async () => {
    const { postForm, access, engine } = setupAudio();
    access.overQuota = true;
    const res = await postForm(T, audioFields());
    expect(res.status).toBe(429);
    expect((await res.json()).error.code).toBe('insufficient_quota');
    expect(engine.transcribeCalls).toEqual([]);
  });

  test('counts one request once against the rate limit, with the rate headers on the answer', async () => {
    const { postForm, access } = setupAudio();
    const res = await postForm(T, audioFields({ stream: 'true' }));
    await res.text();
    expect(access.used).toBe(1);
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('59');
  });
});

describe('the duration bound of a file before it is decoded', () => {
  test('a PCM WAV is bound by its bytes over its rate and one sample, whatever its header says of the data', () => {
    expect(wavFormat(wav(2))).toEqual({ rate: 16_000, bytesPerSample: 2 });
    expect(audioSecondsBound(wav(2), 3600)).toBe(4); // ceil(64044 / 32000) + 1
    expect(audioSecondsBound(wav(10, 44_100), 3600)).toBe(12);
    expect(audioSecondsBound(wav(100), 30)).toBe(30);
  });

  test('a stereo WAV is bound as if mono (more, never less), a float one by its 4-byte samples', () => {
    const b = wav(1);
    const v = new DataView(b.buffer);
    v.setUint16(22, 2, true); // stereo: the same bytes hold half the time
    expect(audioSecondsBound(b, 3600)).toBe(3);
    v.setUint16(20, 3, true);
    v.setUint16(34, 32, true);
    expect(wavFormat(b)).toEqual({ rate: 16_000, bytesPerSample: 4 });
  });

  test('anything else (compressed WAV, other containers, a rate of 0) is bound by --max-audio-seconds alone', () => {
    const adpcm = wav(1);
    new DataView(adpcm.buffer).setUint16(20, 2, true);
    expect(audioSecondsBound(adpcm, 600)).toBe(600);
    const zero = wav(1);
    new DataView(zero.buffer).setUint32(24, 0, true);
    expect(audioSecondsBound(zero, 600)).toBe(600);
    expect(audioSecondsBound(new TextEncoder().encode('ID3xxxxxxxxxxxx'), 600)).toBe(600);
    expect(audioSecondsBound(new Uint8Array(0), 600)).toBe(600);
  });
});
