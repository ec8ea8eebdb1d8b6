// The page: Hearth starts in the tab, then the app's unmodified openai SDK talks to it.
import { startHearth } from 'hearth/browser';
import OpenAI from 'openai';

async function main() {
  const params = new URLSearchParams(location.search);
  const device = params.get('device') === 'webgpu' ? 'webgpu' : 'wasm';
  const hearth = await startHearth({ device });
  const client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, dangerouslyAllowBrowser: true });
  const chat = await client.chat.completions.create({
    model: 'svc/tiny-chat',
    messages: [{ role: 'user', content: 'Hello!' }],
    temperature: 0,
    max_tokens: 16,
  });
  const embeddings = await client.embeddings.create({ model: 'svc/tiny-embed', input: 'a' });
  return { device: hearth.device, models: hearth.models, chat: chat.choices[0]!.message.content, dimensions: embeddings.data[0]!.embedding.length };
}

const out = document.getElementById('out')!;
main().then(
  (result) => {
    out.textContent = JSON.stringify(result);
    out.dataset.state = 'done';
  },
  (err: unknown) => {
    out.textContent = String(err instanceof Error ? err.stack ?? err.message : err);
    out.dataset.state = 'failed';
  },
);
