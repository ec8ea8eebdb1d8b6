// The access layer's browser-safe surface (no node: imports). Node-only parts:
// ./file-store.js and ./open-store.js.
export * from './types.js';
export * from './store.js';
export * from './keys.js';
export { formatResetDuration } from './format.js';
export { createAccess, roundUsd, RATE_WINDOW_MS, DEFAULT_RESPONSE_RETENTION } from './access.js';
export type { AccessOptions, ResponseRetention, CreateKeyOptions, CreatedKey, KeyInfo, HearthAccess } from './access.js';
export { MemoryStore, createMemoryStore } from './memory-store.js';
