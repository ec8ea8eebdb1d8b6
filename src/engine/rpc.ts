// comlink, as both sides of the worker boundary use it. Its default error transfer
// keeps only message/name/stack; ours keeps EngineError's code and param too, so
// the router can answer with the right status.
import * as Comlink from 'comlink';
import { deserializeError, serializeError } from './errors.js';
import type { EngineApi, GenerateRequest, GenerateResult, TokenEvent, TranscribeRequest, TranscribeResult, TranscriptDelta } from './protocol.js';

const builtin = Comlink.transferHandlers.get('throw')!;
Comlink.transferHandlers.set('throw', {
  canHandle: builtin.canHandle,
  serialize: ({ value }: { value: unknown }) => [serializeError(value), []],
  deserialize: (v: ReturnType<typeof serializeError>) => {
    throw deserializeError(v);
  },
} as Comlink.TransferHandler<{ value: unknown }, ReturnType<typeof serializeError>>);

export { Comlink };

interface NodePort {
  postMessage(message: unknown, transfer?: readonly Transferable[]): void;
  on(event: 'message', listener: (data: unknown) => void): unknown;
  off(event: 'message', listener: (data: unknown) => void): unknown;
}

/** A worker_threads port as the Endpoint comlink expects (comlink's own adapter ships only as UMD). */
export function nodeEndpoint(port: NodePort): Comlink.Endpoint {
  const listeners = new WeakMap<object, (data: unknown) => void>();
  return {
    postMessage: (message, transfer) => port.postMessage(message, transfer as Transferable[]),
    addEventListener: (_type, handler) => {
      const listener = (data: unknown) => {
        const ev = { data } as MessageEvent;
        if (typeof handler === 'function') handler(ev);
        else handler.handleEvent(ev);
      };
      port.on('message', listener);
      listeners.set(handler, listener);
    },
    removeEventListener: (_type, handler) => {
      const listener = listeners.get(handler);
      if (listener) port.off('message', listener);
      listeners.delete(handler);
    },
  };
}

/**
 * What the worker exposes beyond EngineApi. Token events do not travel as a callback
 * call per token (comlink: a message there and a reply back for each): every
 * generation of one connection posts on one port, and the events of a decode step,
 * all rows together, leave in one message as `[stream, event][]`, where the
 * stream is a number the main side gave the generation (request ids need not be unique).
 */
interface WorkerApi extends EngineApi {
  tokenPort(port: MessagePort): void;
  generateOnPort(req: GenerateRequest, stream: number): Promise<GenerateResult>;
}

type TokenBatch = [number, TokenEvent][];

/** Worker side: exposes the engine, with the token port of this connection. */
export function exposeEngine(engine: EngineApi, endpoint: Comlink.Endpoint): void {
  let port: MessagePort | null = null;
  let pending: TokenBatch = [];
  // A step emits its rows' events synchronously: a microtask sends them after the last.
  const flush = () => {
    const batch = pending;
    pending = [];
    port?.postMessage(batch);
  };
  const exposed: WorkerApi = {
    ...engine,
    tokenPort(p) {
      port = p;
    },
    generateOnPort(req, stream) {
      return engine.generate(req, (ev) => {
        if (pending.push([stream, ev]) === 1) queueMicrotask(flush);
      });
    },
  };
  Comlink.expose(exposed, endpoint);
}

/** The main side's end of a worker's token port: events by stream. */
type TokenSink = Map<number, (ev: TokenEvent) => void>;
const sinks = new WeakMap<object, Promise<TokenSink>>();
let nextStream = 0;

function tokenSink(remote: Comlink.Remote<WorkerApi>): Promise<TokenSink> {
  let sink = sinks.get(remote);
  if (!sink) {
    const listeners: TokenSink = new Map();
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = (e: MessageEvent<TokenBatch>) => {
      for (const [id, ev] of e.data) listeners.get(id)?.(ev);
    };
    // In Node an open port keeps the process alive; the worker's calls in flight already do.
    (port1 as MessagePort & { unref?: () => void }).unref?.();
    sink = remote.tokenPort(Comlink.transfer(port2, [port2])).then(() => listeners);
    sinks.set(remote, sink);
  }
  return sink;
}

/**
 * Main-thread side of generate. Token events travel on the token port and the result
 * on the worker's, and two ports keep no order between them: the result can overtake
 * the last tokens. Every token appears in exactly one event, so the result is held
 * until the events have delivered all of its tokens.
 */
export async function generateInOrder(
  engine: Comlink.Remote<EngineApi>,
  req: GenerateRequest,
  onToken: (ev: TokenEvent) => void,
): Promise<GenerateResult> {
  const remote = engine as unknown as Comlink.Remote<WorkerApi>;
  const listeners = await tokenSink(remote);
  let seen = 0;
  let expected = Infinity;
  let caughtUp: () => void = () => undefined;
  const stream = nextStream++;
  listeners.set(stream, (ev) => {
    onToken(ev);
    seen += ev.token_ids.length;
    if (seen >= expected) caughtUp();
  });
  try {
    const result = await remote.generateOnPort(req, stream);
    expected = result.token_ids.length;
    if (seen < expected) await new Promise<void>((r) => (caughtUp = r));
    return result;
  } finally {
    listeners.delete(stream);
  }
}

/**
 * Main-thread side of transcribe: the deltas come through a proxied callback, on a port of
 * their own, so the result can overtake the last of them; it waits until every delta the
 * engine sent (`deltas` on the result) has arrived. The file's bytes are transferred, not copied.
 */
export async function transcribeInOrder(
  engine: Comlink.Remote<EngineApi>,
  req: TranscribeRequest,
  onDelta?: (ev: TranscriptDelta) => void,
): Promise<TranscribeResult> {
  const remote = engine as unknown as Comlink.Remote<Required<EngineApi>>;
  let seen = 0;
  let expected = Infinity;
  let caughtUp: () => void = () => undefined;
  const relay = Comlink.proxy((ev: TranscriptDelta) => {
    onDelta?.(ev);
    if (++seen >= expected) caughtUp();
  });
  const buffers = [req.audio.buffer, req.samples?.buffer].filter((b): b is ArrayBuffer => b instanceof ArrayBuffer);
  const result = (await remote.transcribe(Comlink.transfer(req, buffers), onDelta ? relay : undefined)) as TranscribeResult & { deltas?: number };
  expected = result.deltas ?? 0;
  if (onDelta && seen < expected) await new Promise<void>((r) => (caughtUp = r));
  delete result.deltas;
  return result;
}
