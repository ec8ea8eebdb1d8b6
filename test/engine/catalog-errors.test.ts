// Catalog files people write by hand: dtype may name some devices only (the others use
// fp32, as DESIGN.md says), and mistakes are named by entry id and field, in words.
import { describe, expect, it } from 'vitest';
import { parseCatalog } from '../../src/engine/catalog.js';
import { CatalogError } from '../../src/engine/catalog-errors.js';
import { dtypeOf } from '../../src/engine/hub/node.js';
import { onnxFileFor } from '../../src/engine/models/files.js';

const entry = (over: Record<string, unknown> = {}) => ({
  id: 'svc/mine',
  task: 'chat',
  class: '1B',
  context_length: 4096,
  source: './mine',
  price: { input_per_1m: 0.1, output_per_1m: 0.4 },
  ...over,
});
const parse = (data: unknown) => parseCatalog(typeof data === 'string' ? data : JSON.stringify(data), (s) => `/abs/${s}`);
const problems = (data: unknown): string => {
  try {
    parse(data);
  } catch (err) {
    expect(err).toBeInstanceOf(CatalogError);
    return (err as CatalogError).problems;
  }
  throw new Error('the catalog parsed');
};

describe('catalog entries', () => {
  it('may name a dtype for some devices only; the others use fp32', () => {
    const [e] = parse({ models: [entry({ dtype: { webgpu: 'q4f16' } })] });
    expect(e!.dtype).toEqual({ webgpu: 'q4f16' });
    expect(dtypeOf(e!, 'webgpu')).toBe('q4f16');
    expect(dtypeOf(e!, 'cpu')).toBe('fp32');
    expect(onnxFileFor(e!, 'webgpu')).toBe('onnx/model_q4f16.onnx');
    expect(onnxFileFor(e!, 'cuda')).toBe('onnx/model.onnx');
  });

  it('may turn speculative decoding off (or on) for one model; another value is named as the fault', () => {
    expect(parse({ models: [entry({ speculative: 'off' })] })[0]!.speculative).toBe('off');
    expect(parse({ models: [entry({ speculative: 'ngram' })] })[0]!.speculative).toBe('ngram');
    expect(problems({ models: [entry({ speculative: 'always' })] })).toMatch(/svc\/mine.*speculative/);
  });

  it('may name a draft model by its catalog id', () => {
    expect(parse({ models: [entry({ draft: 'svc/small' })] })[0]!.draft).toBe('svc/small');
    expect(problems({ models: [entry({ draft: './small' })] })).toMatch(/svc\/mine.*draft/);
  });

  it('errors name the entry by its id and each field at fault, in words, on one line', () => {
    const msg = problems({
      models: [entry(), entry({ id: 'svc/broken', task: 'chatty', context_length: -5, dtype: { tpu: 'fp32', cpu: 8 }, price: undefined })],
    });
    expect(msg).toBe(
      'entry "svc/broken": task must be one of chat, completion, embedding, rerank, transcription, context_length must be more than 0, ' +
        'dtype.cpu must be a string, dtype has unknown key tpu, price is missing',
    );
  });

  it('an entry without an id is named by its position', () => {
    expect(problems({ models: [entry(), { task: 'chat' }] })).toMatch(/^entry #2: id is missing, class is missing, context_length is missing/);
  });

  it('says what the file as a whole should be, and when it is not JSON', () => {
    expect(problems([entry()])).toBe('must be a JSON object {"models": [...]}');
    expect(problems({ model: [] })).toBe('models is missing');
    expect(problems('{"models": [')).toMatch(/^not valid JSON: /);
  });

  it('names at most three entries, then how many more', () => {
    const msg = problems({ models: ['a', 'b', 'c', 'd', 'e'].map((n) => entry({ id: `svc/${n}`, class: 7 })) });
    expect(msg).toBe('entry "svc/a": class must be a string; entry "svc/b": class must be a string; entry "svc/c": class must be a string; and 2 more entries');
  });
});
