// The URLs behind one upstream model: their health (from probes and from
// requests that could not connect), their figures, and the order to try them in
// (round robin over the healthy ones, so load spreads and a dead one is skipped).
import type { TargetStatus, UpstreamSpec } from './types.js';

/** A URL fit for /status, metrics and errors: no user, password, query or fragment. */
export function displayUrl(raw: string): string {
  try {
    const u = new URL(raw);
    u.username = '';
    u.password = '';
    u.search = '';
    u.hash = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return '(invalid URL)';
  }
}

export class Target {
  healthy: boolean | null = null;
  requests = 0;
  errors = 0;
  #latencyTotal = 0;
  lastError: string | null = null;
  readonly base: string;
  readonly shown: string;

  constructor(url: string) {
    this.base = url.replace(/\/+$/, '');
    this.shown = displayUrl(url);
  }

  recordCall(ms: number, ok: boolean, why?: string): void {
    this.requests++;
    this.#latencyTotal += ms;
    if (!ok) {
      this.errors++;
      this.lastError = why ?? 'error';
    }
  }

  status(model: string): TargetStatus {
    return {
      model,
      url: this.shown,
      healthy: this.healthy,
      requests: this.requests,
      errors: this.errors,
      mean_latency_ms: this.requests ? Math.round((this.#latencyTotal / this.requests) * 10) / 10 : null,
      last_error: this.lastError,
    };
  }
}

export class UpstreamPool {
  readonly targets: Target[];
  #next = 0;
  /** Whether the upstream serves /responses itself: unknown until a request finds out
   * (a 404 or 405 there, not about the model, means it does not: then chat completions). */
  responsesApi?: boolean;

  constructor(
    readonly id: string,
    readonly spec: UpstreamSpec,
  ) {
    this.targets = spec.urls.map((u) => new Target(u));
  }

  /** The healthy URLs, starting at the next in turn: the first serves, the rest are failovers. */
  order(): Target[] {
    const healthy = this.targets.filter((t) => t.healthy);
    if (!healthy.length) return [];
    const start = this.#next++ % healthy.length;
    return [...healthy.slice(start), ...healthy.slice(0, start)];
  }

  /** ready while one URL answers; starting until every URL has been probed once. */
  state(): { status: 'ready' | 'starting' | 'failed'; detail?: string } {
    if (this.targets.some((t) => t.healthy)) return { status: 'ready' };
    if (this.targets.some((t) => t.healthy === null)) return { status: 'starting', detail: 'probing the upstream' };
    const why = this.targets.map((t) => `${t.shown}: ${t.lastError ?? 'down'}`).join('; ');
    return { status: 'failed', detail: `no upstream URL answers (${why})` };
  }
}
