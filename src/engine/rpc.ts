// comlink, as both sides of the worker boundary use it. Its default error transfer
// keeps only message/name/stack; ours keeps EngineError's code and param too, so
// the router can answer with the right status.
import * as Comlink from 'comlink';
import { deserializeError, serializeError } from './errors.js';
import type { EngineApi, GenerateRequest, GenerateResult, TokenEvent } from './protocol.js';

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
 * Worker side: exposes the engine. A generation's token callback is a comlink proxy
 * (its own MessagePort); it is released when the generation ends so ports do not pile up.
 */
export function exposeEngine(engine: EngineApi, endpoint: Comlink.Endpoint): void {
  const exposed: EngineApi = {
    ...engine,
    async generate(req, onToken) {
      const remote = onToken as Comlink.Remote<(ev: TokenEvent) => void>;
      try {
        return await engine.generate(req, (ev) => void remote(ev));
      } finally {
        remote[Comlink.releaseProxy]();
      }
    },
  };
  Comlink.expose(exposed, endpoint);
}

/**
 * Main-thread side of generate. Token events travel on the callback's own port and
 * the result on the worker's, and two ports keep no order between them: the result
 * can overtake the last tokens. Every token appears in exactly one event, so the
 * result is held until the events have delivered all of its tokens.
 */
export async function generateInOrder(
  remote: Comlink.Remote<EngineApi>,
  req: GenerateRequest,
  onToken: (ev: TokenEvent) => void,
): Promise<GenerateResult> {
  let seen = 0;
  let expected = Infinity;
  let caughtUp: () => void = () => undefined;
  const result = await remote.generate(
    req,
    Comlink.proxy((ev: TokenEvent) => {
      onToken(ev);
      seen += ev.token_ids.length;
      if (seen >= expected) caughtUp();
    }),
  );
  expected = result.token_ids.length;
  if (seen < expected) await new Promise<void>((r) => (caughtUp = r));
  return result;
}
