// The Node transport for upstream requests: undici's fetch over one Agent, which
// keeps a keep-alive pool of connections per upstream origin. Connect and body
// timeouts live here; the time allowed for response headers is the spec's
// timeout_ms, applied per request by the forwarding.
import { Agent, fetch as undiciFetch } from 'undici';
import type { Transport } from './types.js';

export interface NodeTransport {
  transport: Transport;
  close(): Promise<void>;
}

export function undiciTransport(opts: { connectTimeoutMs?: number; bodyTimeoutMs?: number } = {}): NodeTransport {
  const agent = new Agent({
    connections: 256,
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 600_000,
    connect: { timeout: opts.connectTimeoutMs ?? 5_000 },
    headersTimeout: 0,
    // Longest silence allowed inside a reply (a stream between two tokens).
    bodyTimeout: opts.bodyTimeoutMs ?? 120_000,
  });
  return {
    transport: (url, init) =>
      undiciFetch(url, { ...(init as Parameters<typeof undiciFetch>[1]), dispatcher: agent }) as unknown as Promise<Response>,
    close: () => agent.close(),
  };
}
