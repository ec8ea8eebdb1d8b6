// `hearth/node`: the local server.
export { serve, type RunningServer } from './serve.js';
export type { ServeOptions } from './options.js';
export { startNodeEngine } from '../../engine/client/node.js';
