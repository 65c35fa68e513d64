export { Informer } from './informer.js';
export type { InformerEventName, InformerHandle, InformerHandlers, InformerOptions, InformerStats } from './informer.js';
export type { IndexFunction } from './indexer.js';
export { OwnWrites } from './own-writes.js';
