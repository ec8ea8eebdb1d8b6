import type { Backend, InferenceSession, Tensor } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import type { KvArray } from './interface.js';
import { loadVlmGraph } from './vlm-graph.js';

/** What a vision encoder is fed: the processor's pixels, and what the graph declares besides. */
export interface VisionInputs {
  pixelValues: Float32Array;
  dims: number[];
  /** Idefics3's: which pixels of each padded tile are real. */
  pixelAttentionMask?: { data: Uint8Array; dims: number[] };
  /** Qwen2-VL's: each image's [t, h, w] in patches. */
  grids?: readonly (readonly [number, number, number])[];
}

/** The names Qwen2-VL (grid_thw) and Qwen2.5-VL (image_grid_thw) exports give the grid input. */
const GRID_INPUTS = ['grid_thw', 'image_grid_thw'];

/**
 * A VLM's vision encoder (onnx-community's `vision_encoder` graph: pixel_values, and the
 * attention mask or the image grids its family takes → image_features), run once per prompt's
 * images, as transformers.js's `encode_image` runs it. Its features, viewed as rows of the text
 * model's hidden width, go in place of the prompt's image tokens, in order.
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

  /** Every real tile's or patch group's features, in order (padding tiles are dropped by the graph). */
  async encode(inputs: VisionInputs): Promise<KvArray> {
    const { Tensor } = this.backend;
    const names = this.session.inputNames;
    const feeds: Record<string, Tensor> = { pixel_values: new Tensor('float32', inputs.pixelValues, inputs.dims) };
    if (inputs.pixelAttentionMask && names.includes('pixel_attention_mask')) feeds.pixel_attention_mask = new Tensor('bool', inputs.pixelAttentionMask.data, inputs.pixelAttentionMask.dims);
    const grid = names.find((n) => GRID_INPUTS.includes(n));
    if (grid) {
      if (!inputs.grids) throw new Error(`the vision encoder takes ${grid}, and this processor gives no image grids`);
      feeds[grid] = new Tensor('int64', BigInt64Array.from(inputs.grids.flat(), BigInt), [inputs.grids.length, 3]);
    }
    const out = await this.session.run(feeds);
    const features = out[this.output];
    for (const [name, t] of Object.entries(out)) if (name !== this.output) t.dispose();
    return features.data as KvArray;
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
