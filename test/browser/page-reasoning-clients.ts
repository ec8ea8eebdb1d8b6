// The clients people read a reasoning model with, each call as an application makes it: the
// openai SDK (reasoning_content in a reply, in stream deltas, beside a tool call), the AI SDK's
// openai-compatible provider (reasoningText) and LangChain's ChatOpenAI
// (additional_kwargs.reasoning_content). Runs in the demo page against the page's own Hearth
// (baseURL the page's), and in Node against the same model in-process (a `fetch` given), so the
// test compares the two results whole. A module of its own, so that only its suite makes Vite
// bundle the AI SDK and LangChain (startDemo's pageDeps).
import OpenAI from 'openai';
import type { Info } from './page-client.js';

type Reasoned = { reasoning_content?: string | null };
const PROMPT = 'Hello there';
const ANSWER_SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };

/** The order of a stream's parts, runs of the same kind collapsed and counted: `reasoning×14`, `content×9`. */
function runs(kinds: string[]): string[] {
  const out: [string, number][] = [];
  for (const k of kinds) {
    const last = out[out.length - 1];
    if (last?.[0] === k) last[1]++;
    else out.push([k, 1]);
  }
  return out.map(([k, n]) => `${k}×${n}`);
}

export async function reasoningClients(info: Info, model: string, fetchImpl?: typeof fetch) {
  const [{ createOpenAICompatible }, ai, { ChatOpenAI }, { tool: lcTool }, { concat }, { z }] = await Promise.all([
    import('@ai-sdk/openai-compatible'),
    import('ai'),
    import('@langchain/openai'),
    import('@langchain/core/tools'),
    import('@langchain/core/utils/stream'),
    import('zod'),
  ]);
  const { baseURL, apiKey } = info;
  const Answer = z.object({ answer: z.string() });
  const messages = [{ role: 'user' as const, content: PROMPT }];

  // The openai SDK.
  const sdk = new OpenAI({ baseURL, apiKey, dangerouslyAllowBrowser: true, maxRetries: 0, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
  const r = await sdk.chat.completions.create({ model, messages, temperature: 0 });
  const message = r.choices[0]!.message as typeof r.choices[0]['message'] & Reasoned;
  const stream = await sdk.chat.completions.create({ model, messages, temperature: 0, stream: true, stream_options: { include_usage: true } });
  const kinds: string[] = [];
  let sReasoning = '';
  let sContent = '';
  let sReasoningTokens: number | undefined;
  for await (const chunk of stream) {
    sReasoningTokens ??= chunk.usage?.completion_tokens_details?.reasoning_tokens;
    const d = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & Reasoned) | undefined;
    if (d?.reasoning_content) (kinds.push('reasoning'), (sReasoning += d.reasoning_content));
    if (d?.content) (kinds.push('content'), (sContent += d.content));
  }
  const called = await sdk.chat.completions.create({
    model,
    messages,
    temperature: 0,
    tools: [{ type: 'function', function: { name: 'reply', parameters: ANSWER_SCHEMA, strict: true } }],
    tool_choice: 'required',
  });
  const calledMessage = called.choices[0]!.message as typeof called.choices[0]['message'] & Reasoned;

  // The AI SDK's openai-compatible provider.
  const aiModel = createOpenAICompatible({ name: 'hearth', baseURL, apiKey, ...(fetchImpl ? { fetch: fetchImpl } : {}) }).chatModel(model);
  const generated = await ai.generateText({ model: aiModel, prompt: PROMPT, temperature: 0, maxRetries: 0 });
  const streamed = ai.streamText({ model: aiModel, prompt: PROMPT, temperature: 0, maxRetries: 0 });
  const parts: string[] = [];
  for await (const part of streamed.fullStream) if (part.type === 'reasoning-delta' || part.type === 'text-delta') parts.push(part.type);
  const aiTool = await ai.generateText({
    model: aiModel,
    prompt: PROMPT,
    tools: { reply: ai.tool({ description: 'Send the reply', inputSchema: Answer }) },
    toolChoice: 'required',
    temperature: 0,
    maxRetries: 0,
  });

  // LangChain's ChatOpenAI (.stream(), not `streaming: true`, which fetches tiktoken files).
  const llm = new ChatOpenAI({ model, apiKey, temperature: 0, maxRetries: 0, configuration: { baseURL, dangerouslyAllowBrowser: true, ...(fetchImpl ? { fetch: fetchImpl } : {}) } });
  const invoked = await llm.invoke(PROMPT);
  let gathered: Awaited<ReturnType<typeof llm.invoke>> | undefined;
  const lcKinds: string[] = [];
  for await (const chunk of await llm.stream(PROMPT)) {
    if (chunk.additional_kwargs.reasoning_content) lcKinds.push('reasoning');
    if (chunk.content) lcKinds.push('content');
    gathered = gathered ? concat(gathered, chunk) : chunk;
  }
  const reply = lcTool(async () => 'sent', { name: 'reply', description: 'Send the reply', schema: Answer });
  const bound = await llm.bindTools([reply], { tool_choice: 'required' }).invoke(PROMPT);

  return {
    openai: {
      reply: {
        reasoning: message.reasoning_content,
        content: message.content,
        finish: r.choices[0]!.finish_reason,
        reasoningTokens: r.usage?.completion_tokens_details?.reasoning_tokens,
        completionTokens: r.usage?.completion_tokens,
      },
      stream: { reasoning: sReasoning, content: sContent, order: runs(kinds), reasoningTokens: sReasoningTokens },
      toolCall: {
        finish: called.choices[0]!.finish_reason,
        reasoning: calledMessage.reasoning_content,
        content: calledMessage.content ?? '',
        calls: (calledMessage.tool_calls ?? []).map((c) => (c.type === 'function' ? { name: c.function.name, arguments: c.function.arguments } : { name: c.type, arguments: '' })),
      },
    },
    aiSdk: {
      generateText: { reasoningText: generated.reasoningText, text: generated.text, finish: generated.finishReason, reasoningTokens: generated.usage.outputTokenDetails.reasoningTokens },
      streamText: { reasoningText: await streamed.reasoningText, text: await streamed.text, order: runs(parts) },
      toolCall: { finish: aiTool.finishReason, reasoningText: aiTool.reasoningText, text: aiTool.text, calls: aiTool.toolCalls.map((c) => ({ name: c.toolName, input: c.input })) },
    },
    langchain: {
      invoke: { reasoning: invoked.additional_kwargs.reasoning_content, content: invoked.content },
      stream: { reasoning: gathered?.additional_kwargs.reasoning_content, content: gathered?.content, order: runs(lcKinds) },
      bindTools: { reasoning: bound.additional_kwargs.reasoning_content, content: bound.content, calls: (bound.tool_calls ?? []).map((c) => ({ name: c.name, args: c.args })) },
    },
  };
}

export type ReasoningClients = Awaited<ReturnType<typeof reasoningClients>>;
