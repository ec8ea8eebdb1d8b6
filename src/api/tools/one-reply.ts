// One generation streamed as one reply's deltas, for the routes that stream a single reply in
// events of their own (the Responses API, Anthropic's Messages): the thinking split and the tool
// calls as chat streams them, and at the end the text the engine released only then.
import type { GenerateResult, ThinkingStart, ToolSyntax } from '../../engine/protocol.js';
import type { GenerationSet } from '../generation.js';
import { StreamedReply, type ReplyDelta } from './respond.js';

/**
 * Hands each delta of the set's one generation to `push`, then `end` the reply and the result.
 * `thinking`: where a reasoning model's reply starts, from its first event (undefined: it does not reason).
 */
export async function streamOneReply(
  set: GenerationSet,
  plan: { parse: boolean; syntax: ToolSyntax },
  thinking: (start: ThinkingStart | undefined) => ThinkingStart | undefined,
  push: (delta: ReplyDelta) => void,
  end: (reply: StreamedReply, result: GenerateResult) => void | Promise<void>,
): Promise<void> {
  // Made at the first event, which says where a reasoning model's reply starts.
  let reply: StreamedReply | undefined;
  const replyFor = (start: ThinkingStart | undefined) => (reply ??= new StreamedReply(plan, thinking(start)));
  let streamed = '';
  for await (const e of set.sent()) {
    if (e.kind === 'error') throw e.error;
    if (e.kind === 'token') {
      streamed += e.ev.text;
      for (const d of replyFor(e.ev.thinking).push(e.ev.text)) push(d);
    } else {
      // Text the engine released only at the end (a held-back partial stop string).
      const r = replyFor(e.result.thinking);
      const rest = e.result.text.length > streamed.length && e.result.text.startsWith(streamed) ? r.push(e.result.text.slice(streamed.length)) : [];
      for (const d of [...rest, ...r.end()]) push(d);
      await end(r, e.result);
    }
  }
}
