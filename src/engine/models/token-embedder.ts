import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import type { KvArray } from './interface.js';
import { loadVlmGraph } from './vlm-graph.js';

/**
 * Rows that replace token embeddings in one row of a run (a VLM's image features in place of
 * its image tokens): `data` holds whole rows of the hidden width, for the row's positions from
 * `at` on.
 */
export interface EmbedSplice {
  at: number;
  data: KvArray;
}

/**
 * A VLM's token embedding table (onnx-community's `embed_tokens` graph: input_ids →
 * inputs_embeds), run before the decoder on every prefill and step, as transformers.js's
 * `forward` does; image features are written over the rows of the image tokens.
 */
export class TokenEmbedder {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
    private readonly output: string,
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry): Promise<TokenEmbedder> {
    const { session, output } = await loadVlmGraph(backend, folder, entry, 'embed', { input: 'input_ids', output: 'inputs_embeds' });
    return new TokenEmbedder(backend, session, output);
  }

  /** The embeddings of `ids` ([rows, len]), each row's splices written over its image tokens' rows. */
  async embed(ids: number[][], splices?: (readonly EmbedSplice[] | undefined)[]): Promise<Tensor> {
    const { Tensor } = this.backend;
    const rows = ids.length;
    const len = ids[0].length;
    const out = await this.session.run({ input_ids: new Tensor('int64', BigInt64Array.from(ids.flat(), BigInt), [rows, len]) });
    const embeds = out[this.output];
    for (const [name, t] of Object.entries(out)) if (name !== this.output) t.dispose();
    if (!splices?.some((s) => s?.length)) return embeds;
    const data = embeds.data as KvArray;
    const hidden = data.length / (rows * len);
    splices.forEach((list, r) => {
      for (const { at, data: rowsOf } of list ?? []) {
        if (rowsOf.constructor !== data.constructor) throw new Error('image features and token embeddings differ in element type');
        if (at < 0 || at * hidden + rowsOf.length > len * hidden) throw new Error('image features run past the end of the row');
        data.set(rowsOf, (r * len + at) * hidden);
      }
    });
    return embeds;
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
