// Runs in the demo page (imported through Vite by the browser tests): the page's own fetch
// posts rerank and score requests as a RAG app would, answered in the tab by the page's
// Hearth. Returns statuses and bodies for the test to hold against Node's.
import type { Info } from './page-client.js';

export interface Posted {
  status: number;
  body: any;
}

async function post(info: Info, path: string, body: unknown): Promise<Posted> {
  const res = await fetch(path, {
    method: 'POST',
    headers: { authorization: `Bearer ${info.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** One request each: vLLM's and Jina's rerank, Cohere's v2 path, vLLM's score, and a chat model on rerank. */
export async function rerankFlow(info: Info, model: string, query: string, documents: string[], score: { text_1: string[]; text_2: string[] }) {
  return {
    rerank: await post(info, '/v1/rerank', { model, query, documents }),
    cohere: await post(info, '/v2/rerank', { model, query, documents, top_n: 2 }),
    score: await post(info, '/v1/score', { model, ...score }),
    refused: await post(info, '/v1/rerank', { model: 'svc/tiny-chat', query, documents }),
  };
}
