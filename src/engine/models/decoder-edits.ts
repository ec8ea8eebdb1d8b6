// The edits a decoder's graph gets at load, on one decoding of the file: lm_head at one
// position a row for prefill (logits-pick.ts) and each position's best token beside the
// logits (best-token.ts). Either may not apply; the file is left as it is where neither does.
import { decodeModelProto, encodeModelProto, type ModelProto } from '../../onnx/model-proto.js';
import { addBestToken, type BestTokenForm } from './best-token.js';
import { pickLogitsPositionIn } from './logits-pick.js';

/** The edit for createModelSession (the best token in `form`): the edited bytes, or null where the graph is left alone. */
export const decoderEdit = (form: BestTokenForm) => (onnx: Uint8Array): Uint8Array | null => editDecoder(onnx, form);

function editDecoder(onnx: Uint8Array, form: BestTokenForm): Uint8Array | null {
  let model: ModelProto;
  try {
    model = decodeModelProto(onnx);
  } catch {
    return null; // onnxruntime then reads the file as it is, and says what is wrong with it if anything is
  }
  const picked = typeof pickLogitsPositionIn(model) !== 'string';
  const best = addBestToken(model, form) === null;
  return picked || best ? encodeModelProto(model) : null;
}
