// Why a port plan was refused. Issues are values with a stable code (users and alerts key on it),
// a path into the planner's input and a readable message, so a webhook, a condition and a log line
// can all say the same thing.

export const PORT_PLAN_ISSUE_CODES = {
  /** The device reports no ports, or a port without id or name; or its metro is unknown. */
  incompleteDevice: 'IncompleteDevice',
  /** `network_frozen` is set on the device and the plan would change its ports. */
  networkFrozen: 'NetworkFrozen',
  /** A desired port the device does not have. */
  unknownPort: 'UnknownPort',
  /** The same port named twice. */
  duplicatePort: 'DuplicatePort',
  /** `layer2` on a physical port: only bond ports change layer. */
  layer2OnNonBondPort: 'Layer2OnNonBondPort',
  /** A layer-3 bond port that would be unbonded, or the first port of a layer-3 bond leaving it. */
  layer3PortUnbonded: 'Layer3PortUnbonded',
  /** A physical port bonded to a bond that is itself disbonded, or to no bond at all. */
  bondedPortWithoutBond: 'BondedPortWithoutBond',
  /** VLANs on a physical port that stays in its bond: they belong on the bond port. */
  vlanOnBondedMember: 'VlanOnBondedMember',
  /** VLANs on a disbonded bond port: they belong on its physical ports. */
  vlanOnUnbondedBond: 'VlanOnUnbondedBond',
  /** The native VLAN is not one of the port's VLANs. */
  nativeVlanNotAssigned: 'NativeVlanNotAssigned',
  /** A native VLAN needs at least two VLANs on the port (as the Terraform provider checks). */
  nativeVlanNeedsTwoVlans: 'NativeVlanNeedsTwoVlans',
  /** A native VLAN on a layer-3 bond port: its untagged traffic is the layer-3 network. */
  nativeVlanOnLayer3Port: 'NativeVlanOnLayer3Port',
  /** The same VLAN twice on one port. */
  duplicateVlan: 'DuplicateVlan',
  /** No VLAN with this vxlan in the project. */
  vlanNotFound: 'VlanNotFound',
  /** The project has this vxlan only in other metros; VLANs are metro-local. */
  vlanInOtherMetro: 'VlanInOtherMetro',
  /** The port says it cannot leave its bond (`disbond_operation_supported: false`). */
  disbondNotSupported: 'DisbondNotSupported',
} as const;

export type PortPlanIssueCode = (typeof PORT_PLAN_ISSUE_CODES)[keyof typeof PORT_PLAN_ISSUE_CODES];

export interface PortPlanIssue {
  code: PortPlanIssueCode;
  /** Where in the input: `desired[1].vlans[0]`, `device.network_frozen`, `device.network_ports[2]`. */
  path: string;
  message: string;
}
