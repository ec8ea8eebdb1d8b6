// POST /tokenize body, in vLLM's two shapes: `prompt` (text, special tokens added as
// /v1/completions adds them) or `messages` (through the chat template as
// /v1/chat/completions renders them, with the same message, tool and template fields).
import { z } from 'zod';
import type { TokenizeRequest, ToolSyntax } from '../../engine/protocol.js';
import { invalidRequest } from '../errors.js';
import { REASONING_EFFORTS, thinkingKwargs } from '../reasoning/index.js';
import { planTools } from '../tools/choice.js';
import { chatMessage, toChatMessages } from './chat.js';
import * as c from './common.js';
import { checkDepth } from './depth.js';
import { structuredFields } from './structured.js';
import type { RequestLimits } from '../limits.js';

export const tokenizeRequestSchema = z
  .object({
    model: c.modelId,
    prompt: z.string().nullish(),
    messages: z.array(chatMessage).min(1).nullish(),
    add_special_tokens: z.boolean().nullish(),
    add_generation_prompt: z.boolean().nullish(),
    /** Not served: transformers.js's templates cannot leave the last turn open. */
    continue_final_message: z.boolean().nullish(),
    /** Not served: a model is rendered with its own template only. */
    chat_template: z.string().nullish(),
    return_token_strs: z.boolean().nullish(),
    tools: structuredFields.tools,
    chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
    reasoning_effort: z.enum(REASONING_EFFORTS).nullish(),
  })
  .superRefine((b, ctx) => {
    if (b.prompt != null && b.messages != null) {
      ctx.addIssue({ code: 'custom', path: ['messages'], message: "Send either 'prompt' or 'messages', not both." });
    }
    if (b.continue_final_message) {
      ctx.addIssue({ code: 'custom', path: ['continue_final_message'], message: "'continue_final_message' is not supported; the chat template renders whole turns." });
    }
    if (b.chat_template != null) {
      ctx.addIssue({ code: 'custom', path: ['chat_template'], message: "'chat_template' is not supported; each model is rendered with its own template." });
    }
  });

export type TokenizeRequestBody = z.output<typeof tokenizeRequestSchema>;

/** What the engine is asked to encode; `syntax`: how the model writes tool calls (its ModelState's). */
export function tokenizeInput(b: TokenizeRequestBody, syntax?: ToolSyntax, images?: RequestLimits): Omit<TokenizeRequest, 'model'> {
  const options = {
    ...(b.add_special_tokens != null ? { add_special_tokens: b.add_special_tokens } : {}),
    ...(b.return_token_strs ? { return_token_strs: true } : {}),
  };
  if (b.messages == null) {
    if (b.prompt == null) throw invalidRequest("Missing required parameter: 'prompt' (text) or 'messages' (a conversation).", 'prompt', 'missing_required_parameter');
    return { prompt: { text: b.prompt }, ...options };
  }
  if (b.chat_template_kwargs) checkDepth(b.chat_template_kwargs, 'chat_template_kwargs');
  // Tools are shown to the template as chat shows them; nothing is generated, so none is chosen.
  const { tools } = planTools({ tools: b.tools ?? null, tool_choice: 'none' }, syntax);
  const template_kwargs = thinkingKwargs(b.reasoning_effort, b.chat_template_kwargs);
  return {
    prompt: { messages: toChatMessages(b.messages, b.model, images), ...(tools ? { tools } : {}), ...(template_kwargs ? { template_kwargs } : {}) },
    ...options,
    ...(b.add_generation_prompt != null ? { add_generation_prompt: b.add_generation_prompt } : {}),
  };
}
