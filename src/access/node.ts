// The access layer for Node: everything in ./index.js plus the file store and openStore.
export * from './index.js';
export { FileStore, openFileStore, ACCESS_LOG } from './file-store.js';
export type { FileStoreInfo } from './file-store.js';
export { openStore } from './open-store.js';
export { RedisStore, openRedisStore, redactRedisUrl } from './redis-store.js';
export type { RedisStoreOptions } from './redis-store.js';
