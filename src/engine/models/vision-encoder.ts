import type { Backend, InferenceSession } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import type { Idefics3Batch } from '../vision/idefics3-processor.js';
import type { KvArray } from './interface.js';
import { loadVlmGraph } from './vlm-graph.js';

/**
 * A VLM's vision encoder (onnx-community's `vision_encoder` graph: pixel_values and
 * pixel_attention_mask → image_features), run once per image, as transformers.js's
 * `encode_image` runs it. Its features, viewed as rows of the text model's hidden width, go
 * in place of the prompt's image tokens, in order.
 */
export class VisionEncoder {
  private constructor(
    private readonly backend: Backend,
    private readonly session: InferenceSession,
    private readonly output: string,
  ) {}

  static async load(backend: Backend, folder: string, entry: CatalogEntry): Promise<VisionEncoder> {
    const { session, output } = await loadVlmGraph(backend, folder, entry, 'vision', { input: 'pixel_values', output: 'image_features' });
    return new VisionEncoder(backend, session, output);
  }

  /** Every real tile's features of a batch, tile after tile (padding tiles are dropped by the graph). */
  async encode(batch: Idefics3Batch): Promise<KvArray> {
    const { Tensor } = this.backend;
    const [b, tiles, , h, w] = batch.dims;
    const feeds: Record<string, InstanceType<typeof Tensor>> = { pixel_values: new Tensor('float32', batch.pixelValues, batch.dims) };
    if (this.session.inputNames.includes('pixel_attention_mask')) feeds.pixel_attention_mask = new Tensor('bool', batch.pixelAttentionMask, [b, tiles, h, w]);
    const out = await this.session.run(feeds);
    const features = out[this.output];
    for (const [name, t] of Object.entries(out)) if (name !== this.output) t.dispose();
    return features.data as KvArray;
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
