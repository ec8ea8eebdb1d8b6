import type { ChatContentPart, ChatMessage } from '../protocol.js';

/** A message's text: its text parts joined (images have none). */
export function contentText(content: ChatMessage['content']): string {
  return typeof content === 'string' ? content : content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** What a chat template is shown of a part: an image is only its place (`{type: 'image'}`); its pixels go to the vision encoder. */
type TemplatePart = { type: 'text'; text: string } | { type: 'image' };

/**
 * The messages as the template reads them. A VLM's template (SmolVLM's) walks each content as
 * a list of parts, so a string is handed to it as one text part, as transformers' processors
 * do; any other template gets text.
 */
export function templateMessages(messages: ChatMessage[], readsParts: boolean): (Omit<ChatMessage, 'content'> & { content: string | TemplatePart[] })[] {
  return messages.map((m) => ({ ...m, content: readsParts ? templateParts(m.content) : contentText(m.content) }));
}

function templateParts(content: ChatMessage['content']): TemplatePart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p: ChatContentPart) => (p.type === 'text' ? { type: 'text', text: p.text } : { type: 'image' }));
}

/** The images of a conversation, in the order the template places them. */
export function chatImages(messages: ChatMessage[]): Extract<ChatContentPart, { type: 'image' }>['image'][] {
  return messages.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.flatMap((p) => (p.type === 'image' ? [p.image] : []))));
}
