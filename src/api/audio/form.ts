// Reading an audio route's multipart body. Its bound is --max-audio-bytes for the file plus the
// router's body limit for the form's other fields and boundaries (never the body limit alone:
// 25 MiB of audio is an ordinary request), held while the body is read (read-limited.ts), so an
// upload past it is cut off with a 413 instead of being buffered whole.
import { readBodyBytes } from '../body.js';
import type { RouteDeps } from '../context.js';
import { ApiError, invalidRequest } from '../errors.js';

/** The most bytes an audio route's body may have. */
export const audioBodyLimit = (deps: Pick<RouteDeps, 'maxBodyBytes' | 'limits'>) => deps.limits.audioBytes + deps.maxBodyBytes;

export const audioTooLarge = (maxAudioBytes: number) =>
  new ApiError(413, 'invalid_request_error', 'request_too_large', `The audio file is larger than the limit of ${maxAudioBytes} bytes (25 MiB is OpenAI's limit; this server's is --max-audio-bytes).`, 'file');

/** A declared length past the bound: refused before anything reads the body. */
export function checkAudioLength(req: Request, deps: Pick<RouteDeps, 'maxBodyBytes' | 'limits'>): void {
  const cl = req.headers.get('content-length');
  if (cl !== null && /^\d+$/.test(cl.trim()) && Number(cl) > audioBodyLimit(deps)) throw audioTooLarge(deps.limits.audioBytes);
}

/** The form, read under the audio bound; a body that is not multipart/form-data is refused unread. */
export async function readAudioForm(req: Request, deps: Pick<RouteDeps, 'maxBodyBytes' | 'limits'>): Promise<FormData> {
  const type = req.headers.get('content-type') ?? '';
  if (!/^multipart\/form-data\s*;.*\bboundary=/i.test(type)) {
    const got = type.split(';')[0]!.trim() || 'none';
    throw invalidRequest(
      `Invalid Content-Type header (${got}): this endpoint takes multipart/form-data, with the audio as its \`file\` part (curl: -F file=@audio.wav -F model=...).`,
    );
  }
  let bytes: Uint8Array;
  try {
    bytes = await readBodyBytes(req, audioBodyLimit(deps));
  } catch (err) {
    throw err instanceof ApiError && err.status === 413 ? audioTooLarge(deps.limits.audioBytes) : err;
  }
  let form: FormData;
  try {
    // The capped reader's bytes sit in an ArrayBuffer of their own (read-limited.ts).
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, { headers: { 'content-type': type } }).formData();
  } catch (err) {
    throw invalidRequest(`The multipart/form-data body could not be parsed (${err instanceof Error ? err.message : String(err)}).`);
  }
  const file = form.get('file');
  if (file instanceof Blob && file.size > deps.limits.audioBytes) throw audioTooLarge(deps.limits.audioBytes);
  return form;
}
