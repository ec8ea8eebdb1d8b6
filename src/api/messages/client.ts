// Which requests are Anthropic's: those to the Messages routes, and any that carries
// `anthropic-version` (Anthropic's SDKs and @ai-sdk/anthropic send it on every request). Those
// may carry their key as `x-api-key` and are answered in Anthropic's shapes; on the OpenAI routes
// a key is read from Authorization only, as OpenAI reads it.
export const MESSAGES_PATH = /^\/v1\/messages(?:\/|$)/;

interface Asked {
  path: string;
  header(name: string): string | undefined;
}

export const isAnthropicClient = (req: Pick<Asked, 'header'>): boolean => req.header('anthropic-version') !== undefined;

export const isAnthropicRequest = (req: Asked): boolean => MESSAGES_PATH.test(req.path) || isAnthropicClient(req);
