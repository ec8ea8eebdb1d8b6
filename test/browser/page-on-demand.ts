// Runs in the demo page (imported through Vite by on-demand.test.ts): the tab's engine started
// with startHearth({ load: 'on-demand', maxLoadedModels: 1 }), asked for one model and then
// another, as an app would; what the API and the engine's own accounting say at each step.
import type { Hearth } from '../../src/front/browser/index.js';

interface Info {
  apiKey: string;
}

const hearth = () => (window as unknown as { hearth: Promise<Hearth> }).hearth;

export async function onDemandFlow(info: Info) {
  const headers = { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' };
  const post = (path: string, body: unknown) => fetch(path, { method: 'POST', headers, body: JSON.stringify(body) });
  const statuses = async () => {
    const list = (await (await fetch('/v1/models', { headers })).json()) as { data: { id: string; status: string; size_mb?: number }[] };
    return Object.fromEntries(list.data.map((m) => [m.id, m.status]));
  };
  const engine = (await hearth()).runtime.engine;
  const loaded = async () => Object.fromEntries(((await engine.stats?.())?.models ?? []).map((m) => [m.id, { loaded: m.loaded, loads: m.loads, unloads: m.unloads }]));
  const atStart = { statuses: await statuses(), engine: await loaded() };
  const chat = await post('/v1/chat/completions', { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Hello!' }], temperature: 0, max_tokens: 8 });
  const afterChat = { status: chat.status, body: chat.status === 200 ? null : await chat.text(), statuses: await statuses(), engine: await loaded() };
  const embed = await post('/v1/embeddings', { model: 'svc/tiny-embed', input: 'hello' });
  const afterEmbed = { status: embed.status, statuses: await statuses(), engine: await loaded() };
  return { atStart, afterChat, afterEmbed };
}

