// Runs in the demo page (imported through Vite by the browser tests): the page's engine
// itself (the worker's, through the runtime), for tests that compare token ids, cached
// tokens and batch sizes with Node's engine rather than text over HTTP.
import type { Hearth } from '../../src/front/browser/index.js';
import type { CatalogEntry, ChatMessage, GenerateResult, SamplingParams } from '../../src/engine/protocol.js';

const engine = async () => (await (window as unknown as { hearth: Promise<Hearth> }).hearth).runtime.engine;

/** Starts serving each entry and waits until every one is ready or failed; their states. */
export async function addModels(entries: CatalogEntry[]) {
  const e = await engine();
  for (const entry of entries) await e.add!(entry);
  const ids = new Set(entries.map((x) => x.id));
  for (;;) {
    const states = (await e.models()).filter((m) => ids.has(m.id));
    if (states.every((m) => m.status !== 'starting')) return states.map((m) => ({ id: m.id, status: m.status, detail: m.detail, workarounds: m.workarounds }));
    await new Promise((r) => setTimeout(r, 50));
  }
}

let n = 0;

/** Greedy generations of `prompts` on `model`: one after another, or all at once. */
export async function generate(model: string, prompts: ChatMessage[][], sampling: SamplingParams, together: boolean) {
  const e = await engine();
  const one = async (messages: ChatMessage[]) => {
    const r: GenerateResult = await e.generate({ id: `page-${n++}`, model, prompt: { messages }, sampling }, () => undefined);
    return { token_ids: r.token_ids, cached_tokens: r.cached_tokens, prompt_tokens: r.prompt_tokens };
  };
  if (together) return Promise.all(prompts.map(one));
  const out = [];
  for (const p of prompts) out.push(await one(p));
  return out;
}

/** The model's decode steps and the rows they carried so far. */
export async function decodeCounts(model: string) {
  const s = (await (await engine()).stats!()).models.find((m) => m.id === model)!;
  return { steps: s.decode_steps ?? 0, rows: s.decode_rows ?? 0 };
}
