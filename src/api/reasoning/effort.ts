// reasoning_effort (chat) and reasoning.effort (responses) on local models: "none" and
// "minimal" switch thinking off where the chat template can (Qwen3's and SmolLM3's read
// enable_thinking; a template that does not ignores it); other efforts leave it on. A
// request's own chat_template_kwargs win.
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const satisfies readonly ReasoningEffort[];

/** The chat template's variables for a request: `kwargs` as given, over what the effort asks. */
export function thinkingKwargs(effort: ReasoningEffort | null | undefined, kwargs?: Record<string, unknown> | null): Record<string, unknown> | undefined {
  const off = effort === 'none' || effort === 'minimal';
  if (!off) return kwargs ?? undefined;
  return { enable_thinking: false, ...kwargs };
}
