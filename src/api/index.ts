// The router's public face: front doors need createRouter and nothing else.
export { createRouter, type Router } from './router.js';
export type { ErrorBody, ErrorEnvelope } from './errors.js';
