// GET /status: a self-contained HTML page (no scripts, no external assets) for a
// person: what /health says, what state each model is in, the incidents the operators
// announced (`hearth incident add`), and the recent faults that 500 responses point here for.
import type { ModelState } from '../../engine/protocol.js';
import type { Announcement } from '../../types.js';
import type { TargetStatus } from '../../upstream/types.js';
import type { Ctx, RouteDeps } from '../context.js';
import type { IncidentLog } from '../incidents.js';

const esc = (s: unknown) =>
  String(s).replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);

function upstreamTable(targets: TargetStatus[]): string {
  if (!targets.length) return '';
  const rows = targets
    .map((t) => {
      const health = t.healthy === null ? 'probing' : t.healthy ? 'healthy' : 'down';
      return (
        `<tr><td>${esc(t.model)}</td><td>${esc(t.url)}</td><td class="s-${t.healthy ? 'ready' : t.healthy === null ? 'starting' : 'failed'}">${health}</td>` +
        `<td>${t.mean_latency_ms ?? ''}</td><td>${t.requests}</td><td>${t.errors}</td><td>${esc(t.last_error ?? '')}</td></tr>`
      );
    })
    .join('');
  return `<h2>Upstreams</h2>
<table id="upstreams"><thead><tr><th>Model</th><th>URL</th><th>Health</th><th>Mean latency (ms)</th><th>Requests</th><th>Errors</th><th>Last error</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

/** When an idle loaded model unloads: its time (UTC), "never" where it is kept, nothing where it is not loaded. */
function expiry(m: ModelState): string {
  if (m.expires_at) return new Date(m.expires_at * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  return m.status === 'ready' && m.expires_at === null ? 'never (or busy)' : '';
}

function page(up: boolean, models: ModelState[], incidents: IncidentLog, since: number, announced: Announcement[], targets: TargetStatus[]): string {
  const health = up ? 'ok' : 'unavailable';
  const notices = announced
    .map((a) => `<tr><td><time datetime="${esc(a.at)}">${esc(a.at)}</time></td><td>${esc(a.text)}</td></tr>`)
    .join('');
  const rows = models
    .map(
      (m) =>
        `<tr><td>${esc(m.id)}</td><td>${esc(m.task)}</td><td>${esc(m.class)}</td><td>${esc(m.context_length)}</td>` +
        `<td class="s-${esc(m.status)}">${esc(m.status)}</td><td>${esc(m.size_mb ?? '')}</td><td>${esc(expiry(m))}</td><td>${esc([m.detail, ...(m.workarounds ?? []).map((w) => `workaround: ${w}`)].filter(Boolean).join('; '))}</td></tr>`,
    )
    .join('');
  const faults = incidents
    .list()
    .map((i) => `<tr><td>${esc(i.at)}</td><td>${esc(i.status)}</td><td>${esc(i.method)} ${esc(i.path)}</td><td><code>${esc(i.requestId)}</code></td></tr>`)
    .join('');
  const uptime = Math.floor((Date.now() - since) / 1000);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="10">
<title>Hearth status</title>
<style>
body{font:14px system-ui,sans-serif;margin:2rem;max-width:60rem}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}
td,th{border-bottom:1px solid #ddd;padding:.3rem .5rem;text-align:left}
.s-ready{color:#176c2e}.s-starting,.s-redeploying,.s-loading{color:#8a5a00}.s-unloaded{color:#666}.s-failed{color:#b00020}
.up{color:#176c2e}.down{color:#b00020}
</style></head><body>
<h1>Hearth</h1>
<p id="liveness" class="${up ? 'up' : 'down'}">${up ? 'Service is up' : 'Engine is not answering'} · up ${uptime}s · ${esc(new Date().toISOString())}</p>
<p id="health">/health: <code>${esc(health)}</code> · ${models.length} model${models.length === 1 ? '' : 's'}, ${models.filter((m) => m.status === 'ready').length} ready</p>
<h2>Incidents</h2>
<table id="announcements"><thead><tr><th>Time (UTC)</th><th>Announcement</th></tr></thead>
<tbody>${notices || '<tr><td colspan="2">No incidents reported</td></tr>'}</tbody></table>
<h2>Models</h2>
<table id="models"><thead><tr><th>Model</th><th>Task</th><th>Class</th><th>Context</th><th>Status</th><th>Size (MiB)</th><th>Unloads</th><th>Detail</th></tr></thead>
<tbody>${rows || '<tr><td colspan="8">No models</td></tr>'}</tbody></table>
${upstreamTable(targets)}
<h2>Recent errors</h2>
<table id="incidents"><thead><tr><th>Time</th><th>Status</th><th>Request</th><th>Request id</th></tr></thead>
<tbody>${faults || '<tr><td colspan="4">None</td></tr>'}</tbody></table>
</body></html>`;
}

export function statusPage(deps: RouteDeps, incidents: IncidentLog, since: number) {
  return async (_c: Ctx): Promise<Response> => {
    let models: ModelState[] = [];
    let up = true;
    try {
      models = await deps.runtime.engine.models();
    } catch {
      up = false;
    }
    const announced = (await deps.runtime.incidents?.().catch(() => [])) ?? [];
    const targets = deps.runtime.upstreams?.targets() ?? [];
    return new Response(page(up, models, incidents, since, announced.slice(0, 20), targets), {
      status: up ? 200 : 503,
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
    });
  };
}
