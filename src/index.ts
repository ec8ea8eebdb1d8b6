// `hearth`: the runtime-agnostic core. Front doors live in hearth/node, hearth/msw, hearth/browser.
export { createRuntime, type RuntimeOptions } from './runtime.js';
export { createRouter } from './api/router.js';
export type { Runtime, RouterOptions } from './types.js';
export type * from './engine/protocol.js';
export type { Access, Principal } from './access/types.js';
