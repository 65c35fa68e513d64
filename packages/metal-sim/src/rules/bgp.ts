import type { BgpConfig } from '../models.js';
import { violation, type RuleViolation } from './rule.js';

export const BGP_SESSION_PROJECT_RULE = 'bgp-session-needs-project-bgp';
export const BGP_SESSION_UNIQUE_RULE = 'bgp-session-one-per-family';
export const BGP_CONFIG_EXISTS_RULE = 'bgp-config-exists';

/**
 * A device's BGP session needs BGP enabled on its project first ("Step 1. Enable BGP on the
 * Project", docs.equinix.com BGP on Equinix Metal); without it the API answers "BGP is not enabled"
 * (kontena/pharos-cluster#1518, terraform-equinix-metal-anthos-on-baremetal#31). A global
 * deployment still waiting for review (`requested`) is not enabled yet (a guess). One session per
 * address family: a second is a 422 saying the device "already has session" (CAPP v0.9.0's
 * EnsureNodeBGPEnabled: "this really should be a 409, but 422 is what is returned").
 */
export function checkBgpSessionCreatable(input: {
  readonly hostname: string;
  readonly addressFamily: string;
  readonly projectBgp: BgpConfig | undefined;
  readonly existingFamilies: readonly string[];
}): RuleViolation | null {
  if (input.projectBgp?.status !== 'enabled') {
    const why =
      input.projectBgp === undefined ? '' : ` (the project's ${input.projectBgp.deploymentType} BGP is ${input.projectBgp.status})`;
    return violation(BGP_SESSION_PROJECT_RULE, `BGP is not enabled${why}; enable BGP on the project first`);
  }
  if (input.existingFamilies.includes(input.addressFamily)) {
    return violation(BGP_SESSION_UNIQUE_RULE, `device ${input.hostname} already has session for ${input.addressFamily}`);
  }
  return null;
}

/**
 * Requesting a project's BGP config is not idempotent: a project that has one refuses another
 * (cloud-provider-equinix-metal#71, "Turns out, it isn't"); once set, the ASN, password and
 * deployment type cannot be changed (terraform-provider-metal#210). The 422 is a guess.
 */
export function checkBgpConfigRequest(existing: BgpConfig | undefined): RuleViolation | null {
  if (existing === undefined) return null;
  return violation(
    BGP_CONFIG_EXISTS_RULE,
    `BGP is already ${existing.status} on this project (${existing.deploymentType}, ASN ${existing.asn})`,
  );
}
