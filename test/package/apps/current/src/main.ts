// The page: Hearth starts in the tab, then the app's unmodified openai SDK talks to it.
import { startHearth } from 'hearth/browser';
import OpenAI from 'openai';

const out = document.getElementById('out')!;
try {
  const device = new URLSearchParams(location.search).get('device') === 'webgpu' ? 'webgpu' : 'wasm';
  const hearth = await startHearth({ device });
  const client = new OpenAI({ baseURL: hearth.baseURL, apiKey: hearth.apiKey, dangerouslyAllowBrowser: true });
  const chat = await client.chat.completions.create({
    model: 'svc/tiny-chat',
    messages: [{ role: 'user', content: 'Hello!' }],
    temperature: 0,
    max_tokens: 16,
  });
  const embeddings = await client.embeddings.create({ model: 'svc/tiny-embed', input: 'a' });
  out.textContent = JSON.stringify({ device: hearth.device, models: hearth.models, chat: chat.choices[0]!.message.content, dimensions: embeddings.data[0]!.embedding.length });
  out.dataset.state = 'done';
} catch (err) {
  out.textContent = String(err instanceof Error ? (err.stack ?? err.message) : err);
  out.dataset.state = 'failed';
}
