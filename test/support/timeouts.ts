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
