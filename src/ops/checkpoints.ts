// Turning "add svc/NAME from <folder | hub repo id>" into a catalog entry: the
// checkpoint is validated (config, tokenizer, ONNX file, a supported architecture)
// and whatever the request left out is read from it. Node only.
import { existsSync } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { downloadFile, fileUrl, configureHub, repoFolder } from '../engine/hub/node.js';
import {
  CHAT_TEMPLATE_FILE,
  CheckpointError,
  DECODER_TYPES,
  ENCODER_TYPES,
  contextLength,
  isSpeechType,
  sizeClass,
  validateCheckpoint,
  type FileReader,
} from '../engine/models/files.js';
import { isCrossEncoderConfig, type ClassifierConfig } from '../engine/models/classifier-head.js';
import type { CatalogEntry, Device } from '../engine/protocol.js';
import type { AddModelRequest } from '../types.js';

export const nodeFiles: FileReader = {
  exists: (p) => access(p).then(() => true, () => false),
  readText: (p) => readFile(p, 'utf8'),
};

const HUB_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*\/[A-Za-z0-9][A-Za-z0-9._-]*$/;
const ID = /^svc\/[A-Za-z0-9._-]+$/;

export type Source = { kind: 'folder'; folder: string } | { kind: 'hub'; repo: string };

/** A folder if one exists there (or the text reads as a path), else a hub repo id "org/name". */
export function classifySource(from: string, cwd = process.cwd()): Source {
  const folder = isAbsolute(from) ? from : resolve(cwd, from);
  if (existsSync(folder) || /^[./~]/.test(from) || isAbsolute(from)) return { kind: 'folder', folder };
  if (HUB_ID.test(from) && !from.includes('..')) return { kind: 'hub', repo: from };
  throw new CheckpointError(from, ['no such folder, and not a hub repo id (org/name)']);
}

const SUFFIX_DTYPE: Record<string, string> = {
  '': 'fp32', _fp16: 'fp16', _quantized: 'q8', _int8: 'int8', _uint8: 'uint8', _q4: 'q4', _q4f16: 'q4f16', _bnb4: 'bnb4',
};

function dtypeOfFile(file: string): string | undefined {
  const m = /^onnx\/model(.*)\.onnx$/.exec(file);
  return m ? SUFFIX_DTYPE[m[1]!] : undefined;
}

export function checkId(id: string): void {
  if (!ID.test(id)) throw new CheckpointError(id, ['model ids look like svc/<name> (letters, digits, . _ -)']);
}

/**
 * A catalog entry for a local folder, after validating it. The dtype is the request's,
 * else fp32 when onnx/model.onnx is there, else the first onnx/model_<dtype>.onnx found.
 */
export async function entryFromFolder(req: AddModelRequest, folder: string, device: Device = 'cpu'): Promise<CatalogEntry> {
  checkId(req.id);
  const info = await validateCheckpoint(nodeFiles, folder);
  const dtype =
    req.dtype ??
    (info.onnx.includes('onnx/model.onnx') ? undefined : { [device]: dtypeOfFile(info.onnx[0]!) ?? 'fp32' });
  const entry: CatalogEntry = {
    id: req.id,
    task: req.task ?? info.task,
    class: req.class ?? info.class,
    context_length: req.context_length ?? info.context_length,
    source: folder,
    ...(dtype ? { dtype } : {}),
    price: req.price ?? { input_per_1m: 0, output_per_1m: 0 },
  };
  await validateCheckpoint(nodeFiles, folder, { entry, device });
  return entry;
}

/** Whether the repo keeps its chat template in chat_template.jinja (fetched into the hub cache when it does). */
async function hubHasChatTemplateFile(repo: string, folder: string): Promise<boolean> {
  const dest = join(folder, CHAT_TEMPLATE_FILE);
  if (existsSync(dest)) return true;
  try {
    return await downloadFile(fileUrl(repo, CHAT_TEMPLATE_FILE), dest, { optional: true });
  } catch (e) {
    throw new CheckpointError(repo, [`${CHAT_TEMPLATE_FILE}: ${(e as Error).message}`]);
  }
}

/**
 * A catalog entry for a hub repo from its config.json and tokenizer_config.json (and
 * chat_template.jinja, where newer exports keep the template) alone
 * (fetched into the hub cache; the weights come later, while the model is starting).
 */
export async function entryFromHub(req: AddModelRequest, repo: string, hubCacheDir: string): Promise<CatalogEntry> {
  checkId(req.id);
  configureHub({ cacheDir: hubCacheDir });
  const folder = repoFolder(hubCacheDir, repo);
  for (const file of ['config.json', 'tokenizer_config.json']) {
    const dest = join(folder, file);
    if (existsSync(dest)) continue;
    try {
      await downloadFile(fileUrl(repo, file), dest);
    } catch (e) {
      throw new CheckpointError(repo, [`${file}: ${(e as Error).message}`]);
    }
  }
  const config = JSON.parse(await readFile(join(folder, 'config.json'), 'utf8')) as Record<string, unknown> & { model_type?: string };
  const type = config.model_type ?? '';
  const decoder = (DECODER_TYPES as readonly string[]).includes(type);
  const speech = isSpeechType(type);
  if (!decoder && !speech && !(ENCODER_TYPES as readonly string[]).includes(type)) {
    throw new CheckpointError(repo, [
      type ? `model_type "${type}" is not supported (decoders: ${DECODER_TYPES.join(', ')}; encoders: ${ENCODER_TYPES.join(', ')}; speech: whisper)` : 'config.json has no model_type',
    ]);
  }
  let task: CatalogEntry['task'] = speech ? 'transcription' : decoder ? 'completion' : isCrossEncoderConfig(config as ClassifierConfig) ? 'rerank' : 'embedding';
  if (decoder) {
    const tc = JSON.parse(await readFile(join(folder, 'tokenizer_config.json'), 'utf8')) as { chat_template?: unknown };
    if (tc.chat_template || (await hubHasChatTemplateFile(repo, folder))) task = 'chat';
  }
  return {
    id: req.id,
    task: req.task ?? task,
    class: req.class ?? sizeClass(config),
    context_length: req.context_length ?? contextLength(config),
    source: repo,
    ...(req.dtype ? { dtype: req.dtype } : {}),
    price: req.price ?? { input_per_1m: 0, output_per_1m: 0 },
  };
}
