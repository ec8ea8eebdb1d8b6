// relaySse: events are rewritten one by one (or into several, Responses-style named
// events without [DONE]), the upstream is read only as fast as the client reads
// (backpressure), a broken-off upstream or a failed rewrite ends the stream with an
// error event, and the end is reported once with how it ended.
import { describe, expect, it } from 'vitest';
import { storeUnavailable } from '../../src/access/types.js';
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

  it('names each event by its type without [DONE], making one event several and waiting on the rewrite', async () => {
    const res = relaySse(source(2).stream, {
      id: 'svc/x',
      named: true,
      map: async (ev) => [
        { type: 'a', n: ev.n },
        { type: 'b', n: ev.n },
      ],
      finish: async () => [{ type: 'last' }],
      onEnd: () => undefined,
    });
    expect(await events(res)).toEqual([
      'event: a\ndata: {"type":"a","n":0}',
      'event: b\ndata: {"type":"b","n":0}',
      'event: a\ndata: {"type":"a","n":1}',
      'event: b\ndata: {"type":"b","n":1}',
      'event: last\ndata: {"type":"last"}',
    ]);
  });

  it('ends with the stream’s own failure events when the upstream breaks off or a rewrite fails', async () => {
    const ends: RelayEnd[] = [];
    const broken = relaySse(source(10, { breakAfter: 1 }).stream, {
      id: 'svc/x',
      named: true,
      map: (ev) => ({ type: 'ev', n: ev.n }),
      failure: (e) => ({ type: 'response.failed', code: e.code }),
      onEnd: (e) => ends.push(e),
    });
    expect(await events(broken)).toEqual(['event: ev\ndata: {"type":"ev","n":0}', 'event: response.failed\ndata: {"type":"response.failed","code":"upstream_error"}']);
    const refused = relaySse(source(10).stream, {
      id: 'svc/x',
      named: true,
      map: async () => {
        throw storeUnavailable(); // the response could not be stored before its last event
      },
      failure: (e) => [{ type: 'response.failed', code: e.code }],
      onEnd: (e) => ends.push(e),
    });
    expect(await events(refused)).toEqual(['event: response.failed\ndata: {"type":"response.failed","code":"store_unavailable"}']);
    expect(ends.map((e) => e.kind)).toEqual(['failed', 'failed']);
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
