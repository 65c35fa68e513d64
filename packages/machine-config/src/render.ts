// MachineNetworkConfig → RenderedNetwork: the files for the chosen renderer (with port placeholders)
// and what the boot script needs to resolve and apply them.
import { renderIfupdown } from './ifupdown.js';
import type { RendererOutput } from './ifupdown.js';
import { renderNetplan } from './netplan.js';
import { renderNetworkd } from './networkd.js';
import { bootPorts, planInterfaces } from './topology.js';
import type { PlannedInterface } from './topology.js';
import type { MachineNetworkConfig, RendererName, RenderedNetwork } from './types.js';
import { validateMachineNetworkConfig } from './validate.js';
import type { ConfigIssue } from './validate.js';

export type RenderOutcome = { kind: 'rendered'; network: RenderedNetwork } | { kind: 'invalid'; issues: ConfigIssue[] };

/**
 * Called by the network controller once a machine's addresses are allocated. Pure and deterministic:
 * the same config always renders the same bytes (the injected part's hash depends on it).
 */
export function renderMachineNetwork(config: MachineNetworkConfig): RenderOutcome {
  const issues = validateMachineNetworkConfig(config);
  if (issues.length > 0) return { kind: 'invalid', issues };
  const output = renderFiles(config.renderer, planInterfaces(config.ports));
  return {
    kind: 'rendered',
    network: {
      version: 1,
      renderer: config.renderer,
      metadataUrl: config.metadataUrl,
      ports: bootPorts(config.ports),
      interfaces: output.interfaces,
      files: output.files,
    },
  };
}

export function renderFiles(renderer: RendererName, interfaces: readonly PlannedInterface[]): RendererOutput {
  switch (renderer) {
    case 'ifupdown':
      return renderIfupdown(interfaces);
    case 'netplan':
      return renderNetplan(interfaces);
    case 'networkd':
      return renderNetworkd(interfaces);
  }
}
