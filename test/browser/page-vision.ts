// Runs in the demo page (imported through Vite by the browser tests): a chat about a picture as a
// web app sends it, answered in the tab by the page's own VLM: the openai SDK with the picture as
// a data: URL, as a blob: URL of a File the user picked and as a same-origin URL; the Responses
// API's input_image; the AI SDK's image part and LangChain's image_url part. Returns what each got.
import OpenAI from 'openai';
import type { Info } from './page-client.js';

export interface VisionAsk {
  model: string;
  /** The picture's bytes, base64. */
  png: string;
  /** The same picture on this origin (the test's mirror serves it). */
  sameOrigin: string;
  question: string;
  maxTokens: number;
  /** A model that takes no images. */
  textModel: string;
}

const bytesOf = (base64: string) => Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));

async function refusal(p: Promise<unknown>) {
  try {
    await p;
    return { status: 200, param: null as unknown, message: '' };
  } catch (e) {
    const err = e as { status?: number; param?: unknown; message: string };
    return { status: err.status, param: err.param, message: err.message };
  }
}

/** One chat about the picture (a data: URL) through the openai SDK: the reply and its prompt count. */
export async function askOnce(info: Info, model: string, png: string, question: string, maxTokens: number) {
  const sdk = new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const r = await sdk.chat.completions.create({
    model,
    messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }, { type: 'text', text: question }] }],
    temperature: 0,
    max_tokens: maxTokens,
  });
  return { text: r.choices[0]!.message.content, promptTokens: r.usage!.prompt_tokens };
}

export async function visionFlow(info: Info, a: VisionAsk) {
  const [{ createOpenAICompatible }, ai, { ChatOpenAI }, { HumanMessage }] = await Promise.all([
    import('@ai-sdk/openai-compatible'),
    import('ai'),
    import('@langchain/openai'),
    import('@langchain/core/messages'),
  ]);
  const baseURL = `${location.origin}/v1`;
  const sdk = new OpenAI({ baseURL, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const ask = (url: string, model = a.model) =>
    sdk.chat.completions.create({
      model,
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url } }, { type: 'text', text: a.question }] }],
      temperature: 0,
      max_tokens: a.maxTokens,
    });
  const reply = async (url: string) => {
    const r = await ask(url);
    return { text: r.choices[0]!.message.content, promptTokens: r.usage!.prompt_tokens };
  };
  const dataUrl = `data:image/png;base64,${a.png}`;
  // What a file input or a paste hands the page: a File, shown through an object URL.
  const blobUrl = URL.createObjectURL(new File([bytesOf(a.png)], 'picked.png', { type: 'image/png' }));
  try {
    const chat = await reply(dataUrl);
    const blob = await reply(blobUrl);
    const sameOrigin = await reply(a.sameOrigin);
    const responses = await sdk.responses.create({
      model: a.model,
      input: [{ role: 'user', content: [{ type: 'input_image', image_url: blobUrl, detail: 'auto' }, { type: 'input_text', text: a.question }] }],
      temperature: 0,
      max_output_tokens: a.maxTokens,
      store: false,
    });
    const aiSdk = await ai.generateText({
      model: createOpenAICompatible({ name: 'hearth', baseURL, apiKey: info.apiKey }).chatModel(a.model),
      temperature: 0,
      maxOutputTokens: a.maxTokens,
      maxRetries: 0,
      messages: [{ role: 'user', content: [{ type: 'image', image: bytesOf(a.png), mediaType: 'image/png' }, { type: 'text', text: a.question }] }],
    });
    const llm = new ChatOpenAI({ model: a.model, apiKey: info.apiKey, temperature: 0, maxTokens: a.maxTokens, maxRetries: 0, configuration: { baseURL, dangerouslyAllowBrowser: true } });
    const langchain = await llm.invoke([new HumanMessage({ content: [{ type: 'image_url', image_url: { url: dataUrl } }, { type: 'text', text: a.question }] })]);
    return {
      chat,
      blob,
      sameOrigin,
      responses: { text: responses.output_text, inputTokens: responses.usage!.input_tokens },
      aiSdk: aiSdk.text,
      langchain: langchain.content,
      refused: {
        otherOrigin: await refusal(ask('http://pictures.example/cat.png')),
        textModel: await refusal(ask(dataUrl, a.textModel)),
        missing: await refusal(ask(`${a.sameOrigin}.missing`)),
      },
      models: (await sdk.models.list()).data.map((m) => ({ id: m.id, input_modalities: (m as { input_modalities?: string[] }).input_modalities })),
    };
  } finally {
    URL.revokeObjectURL(blobUrl);
  }
}
