import type { Backend, DeviceBudget } from '../../backends/types.js';

export type { DeviceBudget };
import type { CatalogEntry } from '../protocol.js';
import { dtypeFor, externalDataFiles, joinPath, modelGraphs, onnxFileForDtype, readJson, textConfigOf } from './files.js';

/** What the device offers a model, as the backend can tell. */

export interface FitEstimate {
  weightsBytes: number;
  /** One full context of KV (every layer, key and value) in the model's own element type. */
  kvBytes: number;
  /** One layer's key (or value) tensor for a full context. */
  layerKvBytes: number;
}

export interface KvConfig {
  num_hidden_layers?: number;
  num_attention_heads?: number;
  num_key_value_heads?: number;
  hidden_size?: number;
  head_dim?: number;
}

/** fp16 and q4f16 exports keep their KV cache in float16; the others in float32. */
const kvElementBytes = (dtype: string) => (dtype === 'fp16' || dtype.endsWith('f16') ? 2 : 4);

/** Weights (the ONNX file and its external data) plus one full context of KV, before anything is loaded. */
export async function estimateFit(backend: Backend, folder: string, entry: CatalogEntry, dtype = dtypeFor(entry, backend.device)): Promise<FitEstimate | undefined> {
  if (!backend.fileSize) return undefined;
  const config = (await readJson<KvConfig & { model_type?: string; text_config?: KvConfig }>(backend, joinPath(folder, 'config.json'))) ?? {};
  // A VLM's weights are its three graphs (its KV is its text model's); a Whisper's, its encoder and decoder.
  const graphs = modelGraphs(config.model_type);
  let weightsBytes = 0;
  for (const graph of graphs) {
    const file = onnxFileForDtype(dtype, entry.id, graph);
    for (const f of [file, ...(await externalDataFiles(backend, folder, file))]) weightsBytes += (await backend.fileSize(joinPath(folder, f))) ?? 0;
  }
  return estimateFromSizes(entry, dtype, weightsBytes, textConfigOf(config));
}

/** The same estimate from a weights size and a config.json known before the files are here (a hub repo's listing). */
export function estimateFromSizes(entry: CatalogEntry, dtype: string, weightsBytes: number, c: KvConfig): FitEstimate {
  // Encoders (embeddings, rerank) keep no KV cache.
  if (entry.task === 'embedding' || entry.task === 'rerank' || !c.num_hidden_layers || !c.num_attention_heads || !c.hidden_size) {
    return { weightsBytes, kvBytes: 0, layerKvBytes: 0 };
  }
  const headDim = c.head_dim ?? c.hidden_size / c.num_attention_heads;
  const layerKvBytes = (c.num_key_value_heads ?? c.num_attention_heads) * headDim * entry.context_length * kvElementBytes(dtype);
  return { weightsBytes, kvBytes: 2 * c.num_hidden_layers * layerKvBytes, layerKvBytes };
}

/** Refuses, naming the sizes, a model the device cannot hold. */
export function checkFit(id: string, est: FitEstimate, budget: DeviceBudget): void {
  const need = est.weightsBytes + est.kvBytes;
  if (budget.memory && need > budget.memory.bytes) {
    throw new Error(
      `${id} does not fit: ${size(est.weightsBytes)} of weights + ${size(est.kvBytes)} of KV cache for one full context ` +
        `= ${size(need)}, but the ${budget.memory.what} is ${size(budget.memory.bytes)} (lower context_length or pick a smaller dtype)`,
    );
  }
  if (budget.storage && est.weightsBytes > budget.storage.bytes) {
    throw new Error(`${id} does not fit: ${size(est.weightsBytes)} of weight files, but the ${budget.storage.what} is ${size(budget.storage.bytes)}`);
  }
  if (budget.maxBuffer && est.layerKvBytes > budget.maxBuffer) {
    throw new Error(
      `${id} does not fit: one layer's KV cache for a full context is ${size(est.layerKvBytes)}, ` +
        `over the adapter's largest buffer (${size(budget.maxBuffer)}); lower context_length`,
    );
  }
}

export const size = (n: number) => (n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(1)} GiB` : `${(n / 2 ** 20).toFixed(1)} MiB`);
