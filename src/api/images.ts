// Images in requests: a part's URL → the bytes the engine decodes. data: URLs everywhere;
// other URLs only where the server's policy allows them (image-urls.ts), fetched before the
// engine is asked.
import type { ImageInput, ModelState } from '../engine/protocol.js';
import { ApiError, invalidRequest } from './errors.js';
import { allowedImageUrl, imageToFetch, refusedUrlHint } from './image-urls.js';
import type { RequestLimits } from './limits.js';

/** The image types a data: URL may carry (the decoders read these; a GIF gives its first frame). */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/webp', 'image/gif']);

/** Whether a model reads images (its input_modalities say so). */
export const takesImages = (model: Pick<ModelState, 'input_modalities'>): boolean => model.input_modalities?.includes('image') === true;

/**
 * What a body that carries images may hold beyond the body limit: the most images a request may
 * have, each as a base64 data: URL of the largest size allowed. Only routes that take images
 * read that far, and the rest of their body must still fit the body limit (body-text-meter.ts).
 */
export function imageAllowance(limits: RequestLimits): number {
  return limits.images * (Math.ceil(limits.imageBytes / 3) * 4 + 64);
}

/** The 400 for more image parts than a request may hold; `param` names the first one over. */
export function checkImageCount(count: number, limits: RequestLimits, param: string): void {
  if (count > limits.images) throw invalidRequest(`The request has ${count} images; one request may have at most ${limits.images}.`, param);
}

/**
 * A part's image as bytes, or as the URL to fetch them from (fetchImageUrls, before the engine
 * sees it). `param`: the part's path (messages[1].content[0]); `urlParam`: its URL's
 * (…image_url.url), which a fault in the URL is blamed on. A data: payload's decoded size is
 * known from its length, so one over the limit is refused (413) before it is decoded.
 */
export function imageFromUrl(url: string, param: string, urlParam: string, limits: RequestLimits, detail?: ImageInput['detail']): ImageInput {
  const input = (bytes: Uint8Array): ImageInput => ({ bytes, param, ...(detail ? { detail } : {}) });
  if (!/^data:/i.test(url)) {
    const allowed = allowedImageUrl(url, limits.imageUrls);
    if (allowed) return imageToFetch(allowed, param, urlParam, detail);
    if (/^(https?|blob):/i.test(url) || limits.imageUrls?.pageOrigin) throw invalidRequest(refusedUrlHint(limits.imageUrls), urlParam);
  }
  const m = /^data:([^,;]*)((?:;[^,;]*)*),/i.exec(url);
  if (!m) throw invalidRequest(`An image URL must be a data: URL (data:image/png;base64,…); got one starting "${url.slice(0, 16)}".`, urlParam);
  const type = m[1]!.toLowerCase();
  if (!IMAGE_TYPES.has(type)) throw invalidRequest(`Images of type '${type || 'none given'}' are not supported; send image/png, image/jpeg, image/webp or image/gif.`, urlParam);
  const payload = url.slice(m[0].length);
  const base64 = /;base64$/i.test(m[2]!);
  const decodedSize = base64 ? Math.floor((payload.length * 3) / 4) : payload.length;
  if (decodedSize > limits.imageBytes + 2) throw imageTooLarge(limits.imageBytes, param);
  const bytes = base64 ? fromBase64(payload, urlParam) : new TextEncoder().encode(decodeURIComponent(payload));
  if (bytes.length > limits.imageBytes) throw imageTooLarge(limits.imageBytes, param);
  if (bytes.length === 0) throw invalidRequest('The image is empty.', urlParam);
  return input(bytes);
}

const imageTooLarge = (max: number, param: string) => new ApiError(413, 'invalid_request_error', 'request_too_large', `The image is larger than the limit of ${max} bytes.`, param);

function fromBase64(text: string, param: string): Uint8Array {
  const clean = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(clean)) throw invalidRequest('The image data: URL is not valid base64.', param);
  const binary = atob(clean.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
