// Images named by URL rather than sent as data: URLs. Which URLs may be fetched is the
// server's choice, never the request's: in Node, http(s) URLs of the hosts `hearth serve
// --image-url-hosts` names (none by default: a local server that fetches whatever a request
// names is an SSRF hole); in the page, its own blob: URLs and same-origin URLs. A fetch has a
// timeout and the byte limit, and follows a redirect only to a URL the policy also allows.
import type { ChatMessage, ImageInput } from '../engine/protocol.js';
import { ApiError, invalidRequest } from './errors.js';
import type { ImageUrlPolicy, RequestLimits } from './limits.js';
import { readLimited } from './read-limited.js';

export type { ImageUrlPolicy };

const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_REDIRECTS = 5;

/**
 * The images whose bytes are still to be fetched, with their URL and its field. Kept beside the
 * images, not on them, so that what reaches the engine is the engine's ImageInput and nothing of
 * the router's.
 */
const pending = new WeakMap<ImageInput, { url: string; urlParam: string }>();

/** An image to fetch from `url` (allowed by the policy) before the engine is asked. */
export function imageToFetch(url: URL, param: string, urlParam: string, detail?: ImageInput['detail']): ImageInput {
  const image: ImageInput = { bytes: new Uint8Array(0), param, ...(detail ? { detail } : {}) };
  pending.set(image, { url: url.href, urlParam });
  return image;
}

/** The URL, resolved, when the policy lets it be fetched; else undefined. */
export function allowedImageUrl(url: string, policy: ImageUrlPolicy | undefined): URL | undefined {
  if (!policy) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url, policy.pageOrigin);
  } catch {
    return undefined;
  }
  if (parsed.protocol === 'blob:') return policy.pageOrigin && parsed.origin === policy.pageOrigin ? parsed : undefined;
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  if (policy.pageOrigin && parsed.origin === policy.pageOrigin) return parsed;
  if (parsed.username || parsed.password) return undefined;
  const hosts = policy.hosts ?? [];
  return hosts.includes(parsed.host) || hosts.includes(parsed.hostname) ? parsed : undefined;
}

/** What the 400 for a URL the policy refuses says the server does fetch. */
export function refusedUrlHint(policy: ImageUrlPolicy | undefined): string {
  const allowed = [
    ...(policy?.pageOrigin ? [`this page's blob: URLs and URLs of ${policy.pageOrigin}`] : []),
    ...(policy?.hosts?.length ? [`http(s) URLs of ${policy.hosts.join(', ')}`] : []),
  ];
  return allowed.length
    ? `This server fetches images only from ${allowed.join(' and ')} (hearth serve --image-url-hosts); send others as data: URLs.`
    : 'Image URLs are fetched only from hosts the server allows (hearth serve --image-url-hosts), and this server allows none; send the image as a data: URL.';
}

/** Every image of the messages that names a URL, fetched into its bytes (in place). */
export async function fetchImageUrls(messages: ChatMessage[], limits: RequestLimits, signal?: AbortSignal): Promise<void> {
  const images = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).flatMap((p) => (p.type === 'image' && pending.has(p.image) ? [p.image] : []));
  await Promise.all(images.map((image) => fetchInto(image, pending.get(image)!, limits, signal)));
}

async function fetchInto(image: ImageInput, { url, urlParam }: { url: string; urlParam: string }, limits: RequestLimits, signal?: AbortSignal): Promise<void> {
  const timeout = AbortSignal.timeout(limits.imageUrls?.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  try {
    const res = await fetchFollowing(url, limits.imageUrls, urlParam, both);
    image.bytes = await readCapped(res, limits.imageBytes, image.param, urlParam);
  } catch (e) {
    if (e instanceof ApiError) throw e;
    if (timeout.aborted) throw invalidRequest(`Timed out fetching the image at ${url}.`, urlParam);
    if (signal?.aborted) throw e;
    throw invalidRequest(`The image at ${url} could not be fetched: ${(e as Error).message}.`, urlParam);
  }
  pending.delete(image);
}

/** fetch, following redirects by hand so that each hop is held to the policy. */
async function fetchFollowing(url: string, policy: ImageUrlPolicy | undefined, urlParam: string, signal: AbortSignal): Promise<Response> {
  let at = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const allowed = allowedImageUrl(at, policy);
    if (!allowed) throw invalidRequest(hop === 0 ? refusedUrlHint(policy) : `The image URL redirects to ${at}, which this server does not fetch from.`, urlParam);
    // blob: URLs cannot redirect (and fetch refuses `redirect: manual` for them in no browser, but needs none).
    const res = await fetch(allowed, { signal, redirect: allowed.protocol === 'blob:' ? 'follow' : 'manual', credentials: 'same-origin' });
    const next = res.status >= 300 && res.status < 400 ? res.headers.get('location') : null;
    if (!next) {
      if (!res.ok) throw invalidRequest(`The image at ${url} could not be fetched: the server answered ${res.status}.`, urlParam);
      return res;
    }
    await res.body?.cancel();
    at = new URL(next, allowed).href;
  }
  throw invalidRequest(`The image URL redirects more than ${MAX_REDIRECTS} times.`, urlParam);
}

/** The body, refused (413) as soon as it passes the limit: announced or read. */
async function readCapped(res: Response, max: number, param: string, urlParam: string): Promise<Uint8Array> {
  const tooLarge = () => new ApiError(413, 'invalid_request_error', 'request_too_large', `The image is larger than the limit of ${max} bytes.`, param);
  const announced = Number(res.headers.get('content-length') ?? NaN);
  if (announced > max) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const bytes = await readLimited(res.body!, (total) => (total > max ? tooLarge() : undefined));
  if (bytes.length === 0) throw invalidRequest('The image is empty.', urlParam);
  return bytes;
}
