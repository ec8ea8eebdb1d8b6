// Validates response bodies against OpenAI's published OpenAPI document, read
// from ../shared/openai-openapi/openapi.json beside the repository. The document
// is not part of the project: when it is absent only this validation is skipped
// (openapiAvailable is false and validateAgainst returns no errors).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  a: Ajv2020,
) => void;

const here = dirname(fileURLToPath(import.meta.url));
export const openapiPath = resolve(here, '../../../shared/openai-openapi/openapi.json');
export const openapiAvailable = existsSync(openapiPath);

let warned = false;
let ajv: Ajv2020 | null = null;
const compiled = new Map<string, ValidateFunction>();
const DOC_ID = 'https://hearth.invalid/openapi.json';

/** OpenAPI 3.0's `nullable: true` becomes JSON Schema's "or null", wherever it appears. */
function denullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(denullable);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) if (k !== 'nullable') out[k] = denullable(v);
  if ((node as Record<string, unknown>).nullable === true) return { anyOf: [out, { type: 'null' }] };
  return out;
}

function collectFormats(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) node.forEach((n) => collectFormats(n, into));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === 'format' && typeof v === 'string') into.add(v);
      else collectFormats(v, into);
    }
  }
}

function load(): Ajv2020 {
  if (ajv) return ajv;
  const doc = JSON.parse(readFileSync(openapiPath, 'utf8')) as { components: { schemas: Record<string, unknown> } };
  // Only the components are schemas; paths and the rest are not, so they stay out.
  const schemas = denullable(doc.components.schemas) as Record<string, unknown>;
  const a = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats(a);
  const formats = new Set<string>();
  collectFormats(schemas, formats);
  // OpenAI's own formats (unixtime, float, int64 ...) describe, they do not constrain.
  for (const f of formats) if (!a.formats[f]) a.addFormat(f, true);
  a.addSchema({ $id: DOC_ID, components: { schemas } });
  ajv = a;
  return a;
}

/** Errors of `body` against components.schemas[schemaName]; empty when valid or when the document is absent. */
export function validateAgainst(schemaName: string, body: unknown): string[] {
  if (!openapiAvailable) {
    if (!warned) {
      warned = true;
      console.warn(`openapi: ${openapiPath} is absent; skipping validation against OpenAI's schemas.`);
    }
    return [];
  }
  const a = load();
  let v = compiled.get(schemaName);
  if (v === undefined) {
    v = a.compile({ $ref: `${DOC_ID}#/components/schemas/${schemaName}` });
    compiled.set(schemaName, v);
  }
  if (v(body)) return [];
  return (v.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}
