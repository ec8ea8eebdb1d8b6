import { describe, expect, test } from 'vitest';
import { EngineError } from '../../src/engine/errors.js';
import { sseFromIterable, sseResponse } from '../../src/api/sse.js';

describe('SSE writing', () => {
  test('frames each item as a data line and ends with [DONE]', async () => {
    async function* items() {
      yield { a: 1 };
      yield { b: 'two\nlines' };
    }
    const res = sseFromIterable(items());
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toContain('no-cache');
    expect(await res.text()).toBe('data: {"a":1}\n\ndata: {"b":"two\\nlines"}\n\ndata: [DONE]\n\n');
  });

  test('tells progress of an event only once the transport has read it, with the mark taken as it was queued', async () => {
    const heard: number[] = [];
    let count = 0;
    let produced!: () => void;
    const done = new Promise<void>((resolve) => (produced = resolve));
    const res = sseResponse(
      async (send) => {
        for (let i = 1; i <= 3; i++) {
          count = i;
          send({ i });
        }
        count = 99; // after the last event: no mark may carry it
        produced();
      },
      { progress: { mark: () => count, sent: (m) => heard.push(m as number) } },
    );
    await done;
    expect(heard).toEqual([]); // all three made and queued, none read
    const reader = res.body!.getReader();
    const decode = async () => new TextDecoder().decode((await reader.read()).value);
    expect(await decode()).toBe('data: {"i":1}\n\n');
    expect(heard).toEqual([1]);
    await decode();
    await decode();
    expect(heard).toEqual([1, 2, 3]);
    expect(await decode()).toBe('data: [DONE]\n\n');
    expect((await reader.read()).done).toBe(true);
    expect(heard).toEqual([1, 2, 3]);
  });

  test('sends a failure after the headers as an error event without [DONE] and hides internals', async () => {
    const res = sseResponse(async (send) => {
      send({ n: 1 });
      throw new Error('/secret/path');
    });
    const text = await res.text();
    const events = text.split('\n\n').filter(Boolean);
    expect(events).toHaveLength(2);
    const err = JSON.parse(events[1]!.slice(6));
    expect(err.error).toMatchObject({ type: 'server_error', code: 'server_error' });
    expect(text).not.toContain('secret');
  });

  test('sends an engine error after the headers with its own code', async () => {
    const res = sseResponse(async () => {
      throw new EngineError('invalid_value', 'bad', 'stop');
    });
    expect(await res.text()).toBe('data: {"error":{"message":"bad","type":"invalid_request_error","param":"stop","code":"invalid_value"}}\n\n');
  });

  test('ends quietly when the source was cancelled', async () => {
    const res = sseResponse(async () => {
      throw new EngineError('cancelled', 'gone');
    });
    expect(await res.text()).toBe('');
  });

  test('calls onCancel once when the consumer cancels the body', async () => {
    let cancels = 0;
    const res = sseResponse(
      async (send) => {
        send({ first: true });
        await new Promise((r) => setTimeout(r, 1000));
      },
      { onCancel: () => cancels++ },
    );
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(cancels).toBe(1);
  });
});
