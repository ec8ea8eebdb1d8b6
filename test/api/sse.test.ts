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

  test('tells progress the mark of the last event queued once the transport has taken them all and had a turn to write them, not before', async () => {
    const heard: number[] = [];
    let count = 0;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const res = sseResponse(
      async (send) => {
        for (const i of [1, 2]) {
          count = i;
          send({ i });
        }
        await gate;
        count = 3;
        send({ i: 3 });
      },
      { progress: { mark: () => count, sent: (m) => heard.push(m as number) } },
    );
    const reader = res.body!.getReader();
    const decode = async (read = reader.read()) => new TextDecoder().decode((await read).value);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual([]); // two events queued, none taken
    expect(await decode()).toBe('data: {"i":1}\n\n');
    expect(heard).toEqual([]); // the second still queued
    expect(await decode()).toBe('data: {"i":2}\n\n');
    const third = reader.read(); // the transport comes back: both taken
    expect(heard).toEqual([]); // heard once the transport has had its turn to write them out
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(heard).toEqual([2]);
    open();
    expect(await decode(third)).toBe('data: {"i":3}\n\n');
    expect(await decode()).toBe('data: [DONE]\n\n');
    expect((await reader.read()).done).toBe(true);
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
