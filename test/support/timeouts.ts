/** Deadlines for waits in integration tests, named for what is awaited. Polling stops early on success. */
export const timeouts = {
  crdEstablished: 30_000,
  garbageCollected: 60_000,
  namespaceDeleted: 60_000,
  watchEvent: 15_000,
  claimBound: 30_000,
  burstBound: 180_000,
  webhookReady: 30_000,
  /** A device created by the CAPP fixture on the simulator becomes active and the PacketMachine ready. */
  deviceReady: 30_000,
  /** How long a "nothing happens" claim (staysTrue) is watched: several reconcile rounds. */
  nothingHappens: 2_000,
} as const;

export const pollIntervalMs = 100;

/**
 * The jest timeout (test()'s third argument) for a test that waits on `deadlines` one after the
 * other: their sum plus a minute for the rest of the test. Above every deadline the test sets
 * itself, so a slow run fails with waitFor's message (what was awaited, what was last seen), never
 * with jest's bare "Exceeded timeout". Tests whose waits add up to less than jest.config.js's
 * testTimeout (120 s) need none.
 */
export function testTimeout(...deadlines: number[]): number {
  return deadlines.reduce((sum, ms) => sum + ms, 0) + 60_000;
}
