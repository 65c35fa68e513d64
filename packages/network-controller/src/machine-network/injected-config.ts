import { createHash } from 'node:crypto';
import { MachineNetworkConditionTypes, MachineNetworkEventReasons, MachineNetworkReasons } from '@metal-l2/api';
import { renderCloudConfigPart, type RenderedAnnouncer, type RenderedNetwork } from '@metal-l2/machine-config';
import { proceed, type MachineNetworkScope, type StepOutcome } from './scope.js';
import { conditionIs, markCondition } from './status.js';

/** The hash injection records for this configuration (the sha256 of our cloud-config part). */
export function renderedHash(network: RenderedNetwork, announcer?: RenderedAnnouncer): string {
  return createHash('sha256').update(renderCloudConfigPart(network, announcer), 'utf8').digest('hex');
}

/**
 * A provisioned machine booted from user data carrying `injected`. When the configuration its
 * addresses render now is another one (a claim re-made after a deletion got another address), the
 * OS has addresses the pool may hand to someone else: said with a condition and a Warning Event,
 * never passed over; Ready stays False until the machine is replaced. The ports are still
 * configured (the step proceeds): they do not depend on the addresses.
 */
export function checkInjected(
  scope: MachineNetworkScope,
  at: { network: RenderedNetwork; announcer?: RenderedAnnouncer; injected: string; message: string },
): StepOutcome {
  const mn = scope.machineNetwork;
  const now = renderedHash(at.network, at.announcer);
  if (now === at.injected) {
    if (!conditionIs(mn, MachineNetworkConditionTypes.userDataInjected, 'True')) {
      markCondition(
        mn,
        {
          type: MachineNetworkConditionTypes.userDataInjected,
          status: 'True',
          reason: MachineNetworkReasons.injected,
          message: at.message,
        },
        scope.now,
      );
    }
    return proceed;
  }
  const addresses = (mn.status?.addresses ?? []).map((a) => `${a.port}.${a.vxlan} ${a.address}/${a.prefix}`).join(', ');
  const message =
    `the server booted with network configuration sha256:${at.injected.slice(0, 12)}, but its addresses now render ` +
    `sha256:${now.slice(0, 12)} (${addresses || 'no addresses'}): the OS does not have these addresses and the ones it has ` +
    'may be given to another machine; replace the machine (delete its Machine) to boot it with the current configuration';
  const previous = mn.status?.conditions?.find((c) => c.type === MachineNetworkConditionTypes.userDataInjected);
  if (previous?.reason !== MachineNetworkReasons.injectedConfigurationDiffers) {
    scope.ctx.events.event(mn, { type: 'Warning', reason: MachineNetworkEventReasons.injectedConfigurationDiffers, message });
  }
  markCondition(
    mn,
    {
      type: MachineNetworkConditionTypes.userDataInjected,
      status: 'False',
      reason: MachineNetworkReasons.injectedConfigurationDiffers,
      message,
    },
    scope.now,
  );
  return proceed;
}
