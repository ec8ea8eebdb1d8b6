// The meter that holds a body's text to the body limit while its image payloads ride beyond it.
import { describe, expect, it } from 'vitest';
import { BodyTextMeter } from '../../src/api/body-text-meter.js';

const bytes = (s: string) => new TextEncoder().encode(s);

/** The meter's count for `body` fed whole, and fed byte by byte (chunks may split anything). */
function counts(body: string): [number, number] {
  const whole = new BodyTextMeter();
  whole.feed(bytes(body));
  const split = new BodyTextMeter();
  for (const b of bytes(body)) split.feed(Uint8Array.of(b));
  return [whole.text, split.text];
}

describe('the body text meter', () => {
  it('counts every byte of a body without images', () => {
    const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Say "hi" \\ ünïcode' }] });
    expect(counts(body)).toEqual([bytes(body).length, bytes(body).length]);
  });

  it("leaves out a data:image/ URL's payload and an Anthropic base64 source's data, and nothing else", () => {
    const payload = 'A'.repeat(5000);
    const url = `data:image/png;base64,${payload}`;
    const chat = JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }, { type: 'text', text: 'data:imag' }] }] });
    expect(counts(chat)).toEqual(Array(2).fill(bytes(chat).length - url.length));
    const anthropic = JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: payload } }] }] });
    expect(counts(anthropic)).toEqual(Array(2).fill(bytes(anthropic).length - payload.length));
  });

  it('counts a text that only starts like a data URL, an escaped quote, and a "data" key whose value is no string', () => {
    const body = JSON.stringify({ text: 'data:imagine \\"data:image/\\"', data: 5, other: { data: ['data'] } });
    expect(counts(body)).toEqual([bytes(body).length, bytes(body).length]);
  });
});
