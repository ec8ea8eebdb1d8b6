// Canary requests: a greedy chat, a json_schema chat and a /generate regex, each deterministic.
// Bad input must never change what they answer: tests ask them before, during and after.
export interface Canary {
  name: string;
  path: string;
  body: Record<string, unknown>;
  /** The part of the answer that must not change. */
  read(json: unknown): unknown;
}

type Chat = { choices: { message: { content: string | null } }[] };

export const CANARIES: Canary[] = [
  {
    name: 'greedy chat',
    path: '/v1/chat/completions',
    body: { model: 'svc/tiny-chat', messages: [{ role: 'user', content: 'Tell me about the sea.' }], temperature: 0, max_tokens: 16 },
    read: (j) => (j as Chat).choices[0]!.message.content,
  },
  {
    name: 'json_schema chat',
    path: '/v1/chat/completions',
    body: {
      model: 'svc/tiny-chat',
      messages: [{ role: 'user', content: 'Describe a city.' }],
      temperature: 0,
      max_tokens: 40,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'city', schema: { type: 'object', properties: { name: { type: 'string', maxLength: 12 }, size: { type: 'integer' } }, required: ['name', 'size'] } },
      },
    },
    read: (j) => (j as Chat).choices[0]!.message.content,
  },
  {
    name: '/generate regex',
    path: '/generate',
    body: { text: 'The code is', sampling_params: { max_new_tokens: 12, temperature: 0, regex: '[A-Z]{3}-[0-9]{2,4}' } },
    read: (j) => (j as { text: string[] }).text,
  },
];

/** Each canary's answer, by name; throws with the status and body when one is not a 200. */
export async function askCanaries(url: string, key: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const c of CANARIES) {
    const res = await fetch(`${url}${c.path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(c.body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`canary ${c.name}: ${res.status} ${text.slice(0, 300)}`);
    out[c.name] = c.read(JSON.parse(text));
  }
  return out;
}
