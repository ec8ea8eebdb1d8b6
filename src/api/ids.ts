// Ids come from crypto.getRandomValues so the router needs no node: module and
// runs unchanged in a service worker.
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function randomId(prefix: string, length = 24): string {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes);
  let out = prefix;
  for (const b of bytes) out += ALPHABET[b % ALPHABET.length];
  return out;
}

// An incoming id is echoed only when it cannot smuggle anything into a header or a log line.
const SANE_REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

// Nor when it looks like an API key: request ids are logged and written to the ledger.
const KEY_LIKE = /svc_live_/i;

export function requestIdFrom(incoming: string | null | undefined): string {
  return incoming && SANE_REQUEST_ID.test(incoming) && !KEY_LIKE.test(incoming) ? incoming : randomId('req_');
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);
