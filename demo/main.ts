// The demo page: Hearth in this tab, used through the unmodified openai SDK.
import { env } from '@huggingface/transformers';
import OpenAI from 'openai';
import { browserCatalog, DEFAULT_MODELS, startHearth, type Hearth, type LoadProgress } from '../src/front/browser/index.js';
import type { CatalogEntry } from '../src/engine/protocol.js';
import { browserSized, megabytes, offers, rememberedModel, rememberModel } from './hub-models.js';
import { speechCard } from './speech.js';

declare global {
  interface Window {
    /** The very object startHearth resolves to, once the in-page runtime is ready (DESIGN.md: the demo's contract). */
    hearth: Promise<Hearth>;
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

const hubURL = params.get('hub') ?? env.remoteHost;

/** The fixtures (or the catalog ids `?models=id,id` names: the rerank fixture, say), the hub model picked on an earlier visit, and `?hubModel=org/name[&hubTask=chat|embedding][&hubDtype=q4f16][&hub=mirror URL]`. */
async function catalog(): Promise<CatalogEntry[] | undefined> {
  const remembered = rememberedModel();
  const all = remembered ? await browserCatalog('/models/').catch(() => []) : [];
  const base = await browserCatalog('/models/', params.get('models')?.split(',') ?? DEFAULT_MODELS);
  const picked = all.filter((e) => e.id === remembered);
  const repo = params.get('hubModel');
  if (!repo) return [...base, ...picked];
  const task = params.get('hubTask') === 'embedding' ? 'embedding' : 'chat';
  const entry: CatalogEntry = {
    id: `svc/hub-${repo.split('/').pop()}`,
    task,
    class: 'hub',
    context_length: task === 'chat' ? 2048 : 512,
    source: repo,
    dtype: { webgpu: params.get('hubDtype') ?? 'fp32', wasm: params.get('hubDtype') ?? 'fp32' },
    price: { input_per_1m: 0, output_per_1m: 0 },
  };
  return [...base, ...picked, entry];
}

const started = catalog().then((list) => startHearth({
  catalog: list,
  hubURL,
  device: forced === 'webgpu' || forced === 'wasm' ? forced : 'auto',
  apiKey: params.get('key') ?? undefined,
  throttleMs: params.has('throttle') ? Number(params.get('throttle')) : undefined,
  waitForModels: !params.has('nowait'),
  // `?upstream=URL&upstreamModel=NAME[&upstreamKey=KEY]`: also serve svc/upstream from that server.
  upstreams: params.has('upstream')
    ? [{ id: 'svc/upstream', url: params.get('upstream')!, model: params.get('upstreamModel') ?? '', apiKey: params.get('upstreamKey') ?? undefined }]
    : undefined,
  engine: params.get('engine') === 'dedicated' ? 'dedicated' : 'auto',
  // `?load=on-demand&keepAlive=5m&maxLoadedModels=1`: models loaded at their first request, idle ones unloaded.
  load: params.get('load') === 'on-demand' ? 'on-demand' : undefined,
  keepAlive: params.get('keepAlive') ?? undefined,
  maxLoadedModels: params.has('maxLoadedModels') ? Number(params.get('maxLoadedModels')) : undefined,
  onProgress: showProgress,
}));
window.hearth = started;

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
  badge.textContent =
    (h.device === 'webgpu' ? 'WebGPU' : `WASM · ${h.threads} thread${h.threads > 1 ? 's' : ''}`) +
    (h.engine === 'shared' ? ' · shared by this site\'s tabs' : ' · this tab only');
  badge.className = `badge ${h.device}`;
  // No retries: a model that failed answers 503 with retry-after 60, and the page should say so at once.
  const client = new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: h.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });

  h.ready.then(() => {
    $('loading').classList.add('done');
    $('load-title').textContent = 'Models loaded';
  });
  const refresh = () => Promise.all([refreshStatus(h), refreshStorage(h)]);
  void refresh();
  setInterval(refresh, 3000);
  void picker(h);

  const { data: models } = await client.models.list();
  const select = $<HTMLSelectElement>('model');
  const taskOf = (x: unknown) => (x as { task: string }).task;
  for (const m of models.filter((x) => taskOf(x) === 'chat' || taskOf(x) === 'completion')) {
    select.add(new Option(m.id, m.id));
  }
  const picture = pictureInput(() => models.find((m) => m.id === select.value) as { input_modalities?: string[] } | undefined);
  select.addEventListener('change', picture.refresh);
  picture.refresh();
  const embedModel = models.find((x) => taskOf(x) === 'embedding')?.id;
  speechCard(client, models.find((x) => taskOf(x) === 'transcription')?.id);
  $<HTMLButtonElement>('send').disabled = false;
  $<HTMLButtonElement>('compare').disabled = false;

  const history: OpenAI.ChatCompletionMessageParam[] = [];
  $('chat-form').addEventListener('submit', async () => {
    const input = $<HTMLInputElement>('prompt');
    const text = input.value.trim();
    if (!text) return;
    input.value = '';
    // A picture goes as its blob: URL, which the page's Hearth reads in the tab (nothing is uploaded).
    const attached = picture.take();
    history.push({ role: 'user', content: attached ? [{ type: 'image_url', image_url: { url: attached } }, { type: 'text', text }] : text });
    bubble('user', text, attached);
    const out = bubble('assistant', '');
    out.classList.add('typing');
    $<HTMLButtonElement>('send').disabled = true;
    const stop = new AbortController();
    const stopButton = $<HTMLButtonElement>('stop');
    stopButton.hidden = false;
    stopButton.onclick = () => stop.abort();
    const t0 = performance.now();
    let first = 0;
    let chunks = 0;
    try {
      const stream = await client.chat.completions.create({
        model: select.value,
        messages: history,
        stream: true,
        stream_options: { include_usage: true },
      }, { signal: stop.signal });
      let usage = 0;
      let prompt = 0;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta.content ?? '';
        if (delta) {
          first ||= performance.now();
          chunks++;
          out.textContent = (out.textContent + delta).trimStart();
          $('log').scrollTop = $('log').scrollHeight;
        }
        if (chunk.usage) ({ completion_tokens: usage, prompt_tokens: prompt } = chunk.usage);
      }
      history.push({ role: 'assistant', content: out.textContent ?? '' });
      const secs = (performance.now() - t0) / 1000;
      $('chat-stats').textContent =
        `${prompt} prompt tokens · ${usage} tokens in ${secs.toFixed(2)} s · first token after ${((first - t0) / 1000).toFixed(2)} s · ` +
        `${(usage / secs).toFixed(0)} tokens/s · ${chunks} chunks`;
    } catch (e) {
      if (stop.signal.aborted) {
        out.classList.add('stopped');
        history.push({ role: 'assistant', content: out.textContent ?? '' });
        $('chat-stats').textContent = `${chunks} chunks, then stopped`;
      } else {
        out.classList.add('error');
        out.textContent = e instanceof Error ? e.message : String(e);
      }
    } finally {
      out.classList.remove('typing');
      stopButton.hidden = true;
      $<HTMLButtonElement>('send').disabled = false;
      input.focus();
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
  void h.ready.then(() => $('compare').click());
}

function bubble(role: string, text: string, picture?: string): HTMLElement {
  const el = document.createElement('div');
  el.className = `msg ${role}`;
  el.textContent = text;
  if (picture) el.prepend(Object.assign(document.createElement('img'), { src: picture, alt: 'the picture sent' }));
  $('log').append(el);
  $('log').scrollTop = $('log').scrollHeight;
  return el;
}

/**
 * The chat's picture: picked with the file input or pasted into the prompt, shown as a
 * thumbnail (a click removes it), offered only while the chosen model takes images.
 */
function pictureInput(model: () => { input_modalities?: string[] } | undefined) {
  const file = $<HTMLInputElement>('picture');
  const thumb = $<HTMLImageElement>('thumb');
  let url: string | undefined;
  const attach = (f: File | null | undefined) => {
    if (!f || !f.type.startsWith('image/')) return;
    url = URL.createObjectURL(f);
    thumb.src = url;
    thumb.hidden = false;
  };
  const clear = () => {
    url = undefined;
    thumb.hidden = true;
    file.value = '';
  };
  file.addEventListener('change', () => attach(file.files?.[0]));
  thumb.addEventListener('click', clear);
  $('prompt').addEventListener('paste', (ev) => {
    const pasted = [...(ev.clipboardData?.files ?? [])].find((f) => f.type.startsWith('image/'));
    if (pasted && !$('attach').hidden) {
      ev.preventDefault();
      attach(pasted);
    }
  });
  return {
    refresh() {
      const takes = model()?.input_modalities?.includes('image') === true;
      $('attach').hidden = !takes;
      if (!takes) clear();
    },
    /** The attached picture's URL, once: the history keeps it (so it is not revoked). */
    take() {
      const taken = url;
      clear();
      return taken;
    },
  };
}

async function refreshStorage(h: Hearth) {
  const s = await h.storage();
  const mine = s.models.filter((m) => m.bytes > 0).map((m) => `${m.id} ${megabytes(m.bytes)}`);
  $('storage').textContent =
    `Storage: ${megabytes(s.usage)} used of ${megabytes(s.quota)}${s.persisted ? ', persistent' : ''}` +
    (mine.length ? ` · ${mine.join(' · ')}` : '');
}

/** The hub models a tab can hold, with their download sizes; picking one remembers it and restarts with it. */
async function picker(h: Hearth) {
  const all = await browserCatalog('/models/').catch(() => []);
  const list = await offers(browserSized(all), hubURL, h.device);
  const reachable = list.filter((o) => o.bytes !== undefined);
  const select = $<HTMLSelectElement>('hub-model');
  const current = rememberedModel();
  if (!reachable.length) {
    $('hub-state').textContent = 'offline';
    select.parentElement!.hidden = true;
    $('hub-note').textContent = 'The hub does not answer: the fixture models serve, as they need no network.';
    return;
  }
  $('hub-state').textContent = `${reachable.length} fit a tab`;
  for (const o of reachable) select.add(new Option(`${o.entry.id} · ${o.entry.class} · ${megabytes(o.bytes!)}`, o.entry.id));
  if (current) select.value = current;
  select.disabled = false;
  const use = $<HTMLButtonElement>('hub-use');
  use.disabled = false;
  $('hub-note').textContent = current
    ? `${current} is remembered for this site: it loads with the fixtures on every visit.`
    : 'Download size shown; weights are stored in this browser and load from there next time.';
  use.onclick = () => {
    rememberModel(select.value);
    location.reload();
  };
}

async function refreshStatus(h: Hearth) {
  try {
    const r = await fetch('/health');
    const body = (await r.json()) as { status: string; engine?: { kind: string; pages: number } };
    const pages = body.engine ? ` · ${body.engine.pages} tab${body.engine.pages > 1 ? 's' : ''} on this engine` : '';
    $('health').textContent = `/health: ${body.status}${pages}`;
    const rows = (await h.runtime.engine.models()).map(
      (m) =>
        `<tr><td>${m.id}${m.status === 'failed' && m.detail ? `<div class="muted small">${escape(m.detail)}</div>` : ''}</td>` +
        `<td><span class="state ${m.status}">${m.status}</span></td></tr>`,
    );
    $('status').querySelector('tbody')!.innerHTML = rows.join('');
  } catch (e) {
    $('health').textContent = `/health: ${String(e)}`;
  }
}

function escape(text: string): string {
  const el = document.createElement('span');
  el.textContent = text;
  return el.innerHTML;
}
