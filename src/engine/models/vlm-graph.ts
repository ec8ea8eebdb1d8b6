import type { Backend, InferenceSession } from '../../backends/types.js';
import type { CatalogEntry } from '../protocol.js';
import { createModelSession, VLM_GRAPHS } from './files.js';

/**
 * One of a VLM's side graphs (embed_tokens, vision_encoder) in the entry's dtype, checked to take
 * `input` and give an output, `output` by name where it has one (onnx-community's names).
 */
export async function loadVlmGraph(
  backend: Backend,
  folder: string,
  entry: CatalogEntry,
  graph: keyof typeof VLM_GRAPHS,
  io: { input: string; output: string },
): Promise<{ session: InferenceSession; output: string }> {
  const name = VLM_GRAPHS[graph];
  const session = await createModelSession(backend, folder, entry, undefined, undefined, name);
  const output = session.outputNames.includes(io.output) ? io.output : session.outputNames[0];
  if (!session.inputNames.includes(io.input) || output === undefined) {
    await session.release();
    throw new Error(`${entry.id}: ${name} takes ${io.input} and gives ${io.output}; it has inputs ${session.inputNames.join(', ')}`);
  }
  return { session, output };
}
