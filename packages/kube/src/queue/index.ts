export { WorkQueue } from './work-queue.js';
export type { WorkQueueHooks, WorkQueueOptions } from './work-queue.js';
export { BucketRateLimiter, ItemExponentialRateLimiter, MaxOfRateLimiter, defaultControllerRateLimiter } from './rate-limiter.js';
export type { RateLimiter } from './rate-limiter.js';
