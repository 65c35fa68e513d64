export { createIpamController, addToManager, startIpamController } from './start.js';
export type { IpamControllerOptions, IpamRunnables, RunningIpamController } from './start.js';
export { parseFlags, usage } from './options.js';
export type { IpamFlags } from './options.js';
export { poolWebhookPaths } from './webhook/pool-webhook.js';
export { validatePool, validatePoolUpdate, validatePoolDelete } from './webhook/pool-validation.js';
