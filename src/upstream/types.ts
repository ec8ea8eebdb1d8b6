// What an upstream model is and what the forwarding needs from its surroundings.
// Runtime-agnostic: the transport is a fetch-shaped function the front door
// supplies (undici with keep-alive pools in Node, the page's fetch in a tab).

import type { UpstreamSpec } from '../engine/protocol.js';

export type { UpstreamSpec };

export type Transport = (url: string, init: RequestInit) => Promise<Response>;

/** One forwarded request's outcome, for metrics. */
export interface UpstreamCall {
  model: string;
  url: string;
  /** Time to the upstream's response headers (or to the failure). */
  ms: number;
  ok: boolean;
}

export interface UpstreamObserver {
  call(ev: UpstreamCall): void;
}

/** One URL's state, as /status and /metrics show it (the URL without credentials). */
export interface TargetStatus {
  model: string;
  url: string;
  /** null until the first probe answered or failed. */
  healthy: boolean | null;
  requests: number;
  errors: number;
  /** Mean time to response headers over the calls so far, in ms (null before any). */
  mean_latency_ms: number | null;
  last_error: string | null;
}
