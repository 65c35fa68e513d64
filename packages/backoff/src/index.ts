export { cappedExponentialMs, withEqualJitter, withSpreadJitter, type BackoffLimits } from './backoff.js';
