// Which MachineNetworkTemplate a PacketMachine uses. Shared by the PacketMachine webhook (which
// reads the PacketMachineTemplate live) and the reconciler (which reads it from its cache), so
// both decide the same way. Pure: the lookup is passed in.

import {
  CAPP_GROUP,
  CapiClonedAnnotations,
  NetworkAnnotations,
  PacketMachineTemplateType,
  type PacketMachine,
  type PacketMachineTemplate,
} from '@metal-l2/api';

/** The value CAPI writes in cloned-from-groupkind for a machine cloned from a PacketMachineTemplate. */
export const PACKET_MACHINE_TEMPLATE_GROUP_KIND = `${PacketMachineTemplateType.kind}.${CAPP_GROUP}`;

/**
 * Where a machine's link to a MachineNetworkTemplate comes from, before any lookup:
 * - `direct`: the machine carries `network.metal.x-k8s.io/template` itself (it wins);
 * - `cloned`: it was cloned from a PacketMachineTemplate, whose annotation decides;
 * - `none`: neither, so the machine is not ours.
 */
export type TemplateLink =
  | { readonly kind: 'direct'; readonly templateName: string }
  | { readonly kind: 'cloned'; readonly packetMachineTemplate: { readonly namespace: string; readonly name: string } }
  | { readonly kind: 'none' };

/** Looks a PacketMachineTemplate up by namespace and name; undefined when there is none. */
export type PacketMachineTemplateLookup = (namespace: string, name: string) => PacketMachineTemplate | undefined;
export type AsyncPacketMachineTemplateLookup = (namespace: string, name: string) => Promise<PacketMachineTemplate | undefined>;

/**
 * The link as the machine's own annotations state it. An empty annotation value counts as absent.
 * cloned-from-name is followed when cloned-from-groupkind names a PacketMachineTemplate or is
 * absent (older CAPI wrote only the name); a clone of anything else is not linked.
 */
export function templateLinkOf(machine: Pick<PacketMachine, 'metadata'>): TemplateLink {
  const annotations = machine.metadata.annotations ?? {};
  const direct = nonEmpty(annotations[NetworkAnnotations.template]);
  if (direct !== undefined) return { kind: 'direct', templateName: direct };
  const clonedFrom = nonEmpty(annotations[CapiClonedAnnotations.fromName]);
  const groupKind = nonEmpty(annotations[CapiClonedAnnotations.fromGroupKind]);
  const namespace = machine.metadata.namespace;
  if (clonedFrom === undefined || namespace === undefined || namespace === '') return { kind: 'none' };
  if (groupKind !== undefined && groupKind !== PACKET_MACHINE_TEMPLATE_GROUP_KIND) return { kind: 'none' };
  return { kind: 'cloned', packetMachineTemplate: { namespace, name: clonedFrom } };
}

/** The MachineNetworkTemplate a PacketMachineTemplate hands to its machines, if any. */
export function templateNameOfPacketMachineTemplate(template: Pick<PacketMachineTemplate, 'metadata'> | undefined): string | undefined {
  return nonEmpty(template?.metadata.annotations?.[NetworkAnnotations.template]);
}

/**
 * The name of the MachineNetworkTemplate (in the machine's namespace) the machine uses, or
 * undefined when it is not linked. The machine's own annotation wins; otherwise the annotation of
 * the PacketMachineTemplate it was cloned from (same namespace), found through `lookupTemplate`
 * (the reconciler passes its cache). A template that is gone links nothing.
 */
export function templateNameFor(machine: Pick<PacketMachine, 'metadata'>, lookupTemplate: PacketMachineTemplateLookup): string | undefined {
  const link = templateLinkOf(machine);
  switch (link.kind) {
    case 'direct':
      return link.templateName;
    case 'cloned':
      return templateNameOfPacketMachineTemplate(lookupTemplate(link.packetMachineTemplate.namespace, link.packetMachineTemplate.name));
    case 'none':
      return undefined;
  }
}

/**
 * What the reconciler may conclude about a machine's link:
 * - `linked`: it uses this MachineNetworkTemplate;
 * - `unlinked`: nothing links it (no annotation of its own, and it was not cloned from a
 *   PacketMachineTemplate, or that template carries none): a hold on it has no reason left;
 * - `unknown`: it was cloned from a PacketMachineTemplate that is not found, so whether it is
 *   linked cannot be read (fail closed: a hold stays).
 */
export type LinkState =
  | { readonly kind: 'linked'; readonly templateName: string }
  | { readonly kind: 'unlinked' }
  | { readonly kind: 'unknown'; readonly packetMachineTemplate: { readonly namespace: string; readonly name: string } };

export function linkStateOf(machine: Pick<PacketMachine, 'metadata'>, lookupTemplate: PacketMachineTemplateLookup): LinkState {
  const link = templateLinkOf(machine);
  switch (link.kind) {
    case 'direct':
      return { kind: 'linked', templateName: link.templateName };
    case 'cloned': {
      const { namespace, name } = link.packetMachineTemplate;
      const template = lookupTemplate(namespace, name);
      if (template === undefined) return { kind: 'unknown', packetMachineTemplate: link.packetMachineTemplate };
      const templateName = templateNameOfPacketMachineTemplate(template);
      return templateName === undefined ? { kind: 'unlinked' } : { kind: 'linked', templateName };
    }
    case 'none':
      return { kind: 'unlinked' };
  }
}

/**
 * templateNameFor with a lookup that reads the API server (the webhook: its cache may not have
 * the template yet). Errors of the lookup are the caller's to handle; the lookup runs only for
 * cloned machines without their own annotation.
 */
export async function resolveTemplateName(
  machine: Pick<PacketMachine, 'metadata'>,
  lookupTemplate: AsyncPacketMachineTemplateLookup,
): Promise<string | undefined> {
  const link = templateLinkOf(machine);
  switch (link.kind) {
    case 'direct':
      return link.templateName;
    case 'cloned':
      return templateNameOfPacketMachineTemplate(
        await lookupTemplate(link.packetMachineTemplate.namespace, link.packetMachineTemplate.name),
      );
    case 'none':
      return undefined;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
