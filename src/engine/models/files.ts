import type { Backend } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';

/** transformers.js's file naming: onnx/model{suffix}.onnx per dtype. */
const DTYPE_SUFFIX: Record<string, string> = {
  fp32: '',
  fp16: '_fp16',
  q8: '_quantized',
  int8: '_int8',
  uint8: '_uint8',
  q4: '_q4',
  q4f16: '_q4f16',
  bnb4: '_bnb4',
};

export function onnxFileFor(entry: CatalogEntry, device: string): string {
  const dtype = entry.dtype?.[device as keyof NonNullable<CatalogEntry['dtype']>] ?? 'fp32';
  const suffix = DTYPE_SUFFIX[dtype];
  if (suffix === undefined) throw new Error(`unknown dtype "${dtype}" for ${entry.id}`);
  return `onnx/model${suffix}.onnx`;
}

export async function readJson<T>(backend: Backend, path: string): Promise<T | undefined> {
  if (!(await backend.exists(path))) return undefined;
  return JSON.parse(await backend.readText(path)) as T;
}

export function joinPath(folder: string, file: string): string {
  return folder.endsWith('/') ? folder + file : `${folder}/${file}`;
}
