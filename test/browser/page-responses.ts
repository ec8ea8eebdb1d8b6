// Runs in the demo page (imported through Vite by the browser tests): the unmodified
// openai SDK's Responses API against the page's own origin, which MSW's service worker
// answers in the tab. Returns the bodies as the SDK got them, for the test to validate.
import OpenAI from 'openai';
import type { Info } from './page-client.js';

const greedy = { model: 'svc/tiny-chat', temperature: 0, max_output_tokens: 16 } as const;

/** create, stream, retrieve, input items and a continued turn, as an application calls them. */
export async function responsesFlow(info: Info) {
  const sdk = new OpenAI({ baseURL: `${location.origin}/v1`, apiKey: info.apiKey, dangerouslyAllowBrowser: true, maxRetries: 0 });
  const created = await sdk.responses.create({ ...greedy, input: 'Tell me about the sea.' });
  const chat = await sdk.chat.completions.create({ model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Tell me about the sea.' }], temperature: 0, max_tokens: 16 });

  const stream = sdk.responses.stream({ ...greedy, input: 'Tell me about the sea.' });
  const events: OpenAI.Responses.ResponseStreamEvent[] = [];
  const arrivals: number[] = [];
  const t0 = performance.now();
  for await (const e of stream) {
    events.push(e);
    arrivals.push(performance.now() - t0);
  }
  const streamed = await stream.finalResponse();

  const retrieved = await sdk.responses.retrieve(created.id);
  const items = await sdk.responses.inputItems.list(created.id);
  const next = await sdk.responses.create({ ...greedy, previous_response_id: created.id, input: 'And the sky?' });
  const whole = await sdk.responses.create({
    ...greedy,
    store: false,
    input: [
      { role: 'user', content: 'Tell me about the sea.' },
      { role: 'assistant', content: created.output_text },
      { role: 'user', content: 'And the sky?' },
    ],
  });
  return {
    created,
    chatText: chat.choices[0]!.message.content,
    events,
    arrivals,
    streamedText: streamed.output_text,
    retrieved,
    items: { data: items.data, has_more: items.has_more },
    next,
    wholeText: whole.output_text,
  };
}
