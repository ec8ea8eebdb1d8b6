// comlink, as both sides of the worker boundary use it. Its default error transfer
// keeps only message/name/stack; ours keeps EngineError's code and param too, so
// the router can answer with the right status.
import * as Comlink from 'comlink';
import { deserializeError, serializeError } from './errors.js';

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
