// GET /health: no key, not rate limited, cheap. 200 while the engine answers.
import type { Ctx, RouteDeps } from '../context.js';
import { jsonResponse } from '../errors.js';

export function health(deps: RouteDeps) {
  return async (_c: Ctx): Promise<Response> => {
    try {
      const models = await deps.runtime.engine.models();
      const engine = await deps.runtime.engineHome?.();
      // `models` keeps its shape (id → status); `model_details` adds what on-demand loading shows,
      // for the models whose engine reports it (an upstream's or a stub's does not).
      const shown = models.filter((m) => m.expires_at !== undefined || m.size_mb !== undefined);
      const details = Object.fromEntries(shown.map((m) => [m.id, { status: m.status, expires_at: m.expires_at ?? null, ...(m.size_mb !== undefined ? { size_mb: m.size_mb } : {}) }]));
      return jsonResponse({ status: 'ok', models: Object.fromEntries(models.map((m) => [m.id, m.status])), ...(shown.length && { model_details: details }), ...(engine && { engine }) });
    } catch {
      // The engine (worker) is not answering: the process is up but cannot serve.
      return jsonResponse({ status: 'unavailable', models: {} }, 503);
    }
  };
}
