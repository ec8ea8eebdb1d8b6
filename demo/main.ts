// The demo page: Hearth in this tab, used through the unmodified openai SDK.
import OpenAI from 'openai';
import { browserCatalog, DEFAULT_MODELS, startHearth, type Hearth, type LoadProgress } from '../src/front/browser/index.js';
import type { CatalogEntry } from '../src/engine/protocol.js';

declare global {
  interface Window {
    /** Resolves once the in-page runtime is ready (DESIGN.md: the demo's contract). */
    hearth: Promise<{ baseURL: string; apiKey: string; device: 'webgpu' | 'wasm'; engine: 'shared' | 'dedicated'; models: string[] }>;
    /** The full handle, for tests. */
    __hearth?: Hearth;
    /** Every load-progress event so far (tests read it). */
    __hearthProgress: LoadProgress[];
  }
}

const params = new URLSearchParams(location.search);
const forced = params.get('device');
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

// Nothing submits natively, even before the runtime is up.
$('chat-form').addEventListener('submit', (ev) => ev.preventDefault());

const progress = new Map<string, LoadProgress>();
window.__hearthProgress = [];
function showProgress(p: LoadProgress) {
  window.__hearthProgress.push(p);
  progress.set(p.model, p);
  const all = [...progress.values()];
  const loaded = all.reduce((n, x) => n + (x.done ? 1 : Number.isNaN(x.fraction) ? 0 : x.fraction), 0);
  $<HTMLProgressElement>('load-bar').value = loaded / Math.max(1, all.length);
  const mb = all.reduce((n, x) => n + x.loaded, 0) / 1e6;
  const cached = all.length > 0 && all.every((x) => x.fromCache);
  $('load-text').textContent = `${all.filter((x) => x.done).length} of ${all.length} ready · ${mb.toFixed(1)} MB${cached ? ' from the cache' : ''}`;
}

/** `?hubModel=org/name[&hubTask=chat|embedding][&hub=mirror URL]`: also serve a hub repo, fetched into the Cache API. */
async function catalog(): Promise<CatalogEntry[] | undefined> {
  const repo = params.get('hubModel');
  if (!repo) return undefined;
  const task = params.get('hubTask') === 'embedding' ? 'embedding' : 'chat';
  const entry: CatalogEntry = {
    id: `svc/hub-${repo.split('/').pop()}`,
    task,
    class: 'hub',
    context_length: task === 'chat' ? 2048 : 512,
    source: repo,
    dtype: { webgpu: 'fp32', wasm: 'fp32' },
    price: { input_per_1m: 0, output_per_1m: 0 },
  };
  return [...(await browserCatalog('/models/', DEFAULT_MODELS)), entry];
}

const started = catalog().then((list) => startHearth({
  catalog: list,
  hubURL: params.get('hub') ?? undefined,
  device: forced === 'webgpu' || forced === 'wasm' ? forced : 'auto',
  apiKey: params.get('key') ?? undefined,
  throttleMs: params.has('throttle') ? Number(params.get('throttle')) : undefined,
  waitForModels: !params.has('nowait'),
  onProgress: showProgress,
}));
window.hearth = started.then((h) => {
  window.__hearth = h;
  return { baseURL: h.baseURL, apiKey: h.apiKey, device: h.device, engine: h.engine, models: h.models };
});

started.then(
  (h) => void ui(h),
  (e: unknown) => {
    $('device').textContent = 'failed';
    $('device').className = 'badge failed';
    $('load-text').textContent = String(e);
  },
);

async function ui(h: Hearth) {
  const badge = $('device');
  badge.textContent = h.device === 'webgpu' ? 'WebGPU' : `WASM · ${h.threads} thread${h.threads > 1 ? 's' : ''}`;
  badge.className = `badge ${h.device}`;
  const client = new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: h.apiKey, dangerouslyAllowBrowser: true });

  h.ready.then(() => {
    $('loading').classList.add('done');
    $('load-title').textContent = 'Models loaded';
  });
  void refreshStatus();
  setInterval(refreshStatus, 3000);

  const { data: models } = await client.models.list();
  const select = $<HTMLSelectElement>('model');
  for (const m of models.filter((x) => (x as unknown as { task: string }).task !== 'embedding')) {
    select.add(new Option(m.id, m.id));
  }
  const embedModel = models.find((x) => (x as unknown as { task: string }).task === 'embedding')?.id;
  $<HTMLButtonElement>('send').disabled = false;
  $<HTMLButtonElement>('compare').disabled = false;

  const history: { role: 'user' | 'assistant'; content: string }[] = [];
  $('chat-form').addEventListener('submit', async () => {
    const input = $<HTMLInputElement>('prompt');
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    history.push({ role: 'user', content: text });
    bubble('user', text);
    const out = bubble('assistant', '');
    out.classList.add('typing');
    $<HTMLButtonElement>('send').disabled = true;
    const t0 = performance.now();
    let first = 0;
    let chunks = 0;
    try {
      const stream = await client.chat.completions.create({
        model: select.value,
        messages: history,
        stream: true,
        stream_options: { include_usage: true },
      });
      let usage = 0;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta.content ?? '';
        if (delta) {
          first ||= performance.now();
          chunks++;
          out.textContent = (out.textContent + delta).trimStart();
          $('log').scrollTop = $('log').scrollHeight;
        }
        if (chunk.usage) usage = chunk.usage.completion_tokens;
      }
      history.push({ role: 'assistant', content: out.textContent ?? '' });
      const secs = (performance.now() - t0) / 1000;
      $('chat-stats').textContent =
        `${usage} tokens in ${secs.toFixed(2)} s · first token after ${((first - t0) / 1000).toFixed(2)} s · ` +
        `${(usage / secs).toFixed(0)} tokens/s · ${chunks} chunks`;
    } catch (e) {
      out.classList.add('error');
      out.textContent = e instanceof Error ? e.message : String(e);
    } finally {
      out.classList.remove('typing');
      $<HTMLButtonElement>('send').disabled = false;
    }
  });

  $('compare').addEventListener('click', async () => {
    if (!embedModel) return;
    const input = [$<HTMLInputElement>('s1').value, $<HTMLInputElement>('s2').value];
    let data: { embedding: number[] }[];
    try {
      ({ data } = await client.embeddings.create({ model: embedModel, input }));
    } catch (e) {
      $('cos').textContent = 'error';
      console.error('embeddings:', e instanceof Error ? e.message : e);
      return;
    }
    const [a, b] = data.map((d) => d.embedding);
    let dot = 0;
    let na = 0;
    let nb = 0;
    a!.forEach((x, i) => {
      dot += x * b![i]!;
      na += x * x;
      nb += b![i]! * b![i]!;
    });
    const cos = dot / Math.sqrt(na * nb);
    $('cos').textContent = cos.toFixed(3);
    $('cos-bar').style.width = `${Math.max(0, cos) * 100}%`;
  });
  $('compare').click();
}

function bubble(role: string, text: string): HTMLElement {
  const el = document.createElement('div');
  el.className = `msg ${role}`;
  el.textContent = text;
  $('log').append(el);
  $('log').scrollTop = $('log').scrollHeight;
  return el;
}

async function refreshStatus() {
  try {
    const r = await fetch('/health');
    const body = (await r.json()) as { status: string; models: Record<string, string> };
    $('health').textContent = `/health: ${body.status}`;
    const rows = Object.entries(body.models).map(
      ([id, s]) => `<tr><td>${id}</td><td><span class="state ${s}">${s}</span></td></tr>`,
    );
    $('status').querySelector('tbody')!.innerHTML = rows.join('');
  } catch (e) {
    $('health').textContent = `/health: ${String(e)}`;
  }
}
