// relaySse: events are rewritten one by one, the upstream is read only as fast as
// the client reads (backpressure), a broken-off upstream ends the stream with an
// error event, and the end is reported once with how it ended.
import { describe, expect, it } from 'vitest';
import { relaySse, type RelayEnd } from '../../src/upstream/relay.js';

const enc = new TextEncoder();

/** An upstream SSE body of `count` events that records how many it was asked for. */
function source(count: number, opts: { breakAfter?: number } = {}) {
  let pulled = 0;
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (opts.breakAfter !== undefined && pulled === opts.breakAfter) {
          controller.error(Object.assign(new TypeError('terminated'), { cause: { code: 'ECONNRESET' } }));
          return;
        }
        if (pulled === count) {
          controller.enqueue(enc.encode('data: [DONE]\n\n'));
          controller.close();
          return;
        }
        controller.enqueue(enc.encode(`data: {"model":"up/m","n":${pulled}}\n\n`));
        pulled++;
      },
    },
    { highWaterMark: 0 },
  );
  return { stream, pulled: () => pulled };
}

async function events(res: Response): Promise<string[]> {
  return (await res.text()).split('\n\n').filter(Boolean);
}

describe('relaySse', () => {
  it('rewrites each event, drops what map refuses, and ends with [DONE]', async () => {
    const ends: RelayEnd[] = [];
    const src = source(4);
    const res = relaySse(src.stream, {
      id: 'svc/x',
      map: (ev) => (ev.n === 2 ? undefined : { ...ev, model: 'svc/x' }),
      finish: () => [{ last: true }],
      onEnd: (e) => ends.push(e),
    });
    expect(await events(res)).toEqual([
      'data: {"model":"svc/x","n":0}',
      'data: {"model":"svc/x","n":1}',
      'data: {"model":"svc/x","n":3}',
      'data: {"last":true}',
      'data: [DONE]',
    ]);
    expect(ends).toEqual([{ kind: 'done' }]);
  });

  it('reads the upstream no further ahead than the client reads', async () => {
    const src = source(1000);
    const res = relaySse(src.stream, { id: 'svc/x', map: (ev) => ev, onEnd: () => undefined });
    const reader = res.body!.getReader();
    for (let i = 0; i < 3; i++) await reader.read();
    await new Promise((r) => setTimeout(r, 50));
    expect(src.pulled()).toBeLessThanOrEqual(5);
    await reader.cancel();
  });

  it('ends a broken-off stream with an upstream_error event and reports the failure', async () => {
    const ends: RelayEnd[] = [];
    const res = relaySse(source(10, { breakAfter: 2 }).stream, { id: 'svc/x', map: (ev) => ev, onEnd: (e) => ends.push(e) });
    const got = await events(res);
    expect(got).toHaveLength(3);
    const last = JSON.parse(got[2]!.slice(6)) as { error: { code: string; type: string; message: string } };
    expect(last.error).toMatchObject({ code: 'upstream_error', type: 'server_error' });
    expect(last.error.message).toContain('connection reset');
    expect(ends.map((e) => e.kind)).toEqual(['failed']);
  });

  it('reports a client that went away as cancelled, once', async () => {
    const ends: RelayEnd[] = [];
    const res = relaySse(source(100).stream, { id: 'svc/x', map: (ev) => ev, onEnd: (e) => ends.push(e) });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(ends).toEqual([{ kind: 'cancelled' }]);
  });
});
