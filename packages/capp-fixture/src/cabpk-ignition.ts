// What Cluster API's kubeadm bootstrap provider (CABPK) v1.7.9 puts in a Flatcar control plane's
// bootstrap Secret (`format: ignition`, KubeadmBootstrapFormatIgnition on): Ignition spec 2.3 JSON,
// captured from the real CABPK by the Cluster API e2e (test/e2e/capi/capi.test.ts, "a Flatcar control
// plane"), which checks on every run that CABPK still renders this shape and rewrites the file with
// METAL_L2_WRITE_FIXTURES=1. Its certificates and keys are the throwaway ones of that test cluster.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The fixture's path (from src/ and dist/ alike). */
export const CABPK_IGNITION_FIXTURE = fileURLToPath(new URL('../fixtures/cabpk-v1.7.9-control-plane.ign', import.meta.url));

/** CABPK v1.7.9's Ignition for a control plane, exactly as it wrote it. */
export function cabpkIgnition(): string {
  return readFileSync(CABPK_IGNITION_FIXTURE, 'utf8');
}
