// The validating webhook on MachineNetworkTemplate CREATE and UPDATE: what the CRD's schema and
// CEL rules cannot say (rules across ports, and the port planner's own checks).

import type { MachineNetworkTemplate } from '@metal-l2/api';
import type { AdmissionHandler, AdmissionRequest, AdmissionVerdict } from '@metal-l2/kube';
import { validateTemplate, type TemplateIssue } from './template-validation.js';

/**
 * The handler for NetworkWebhookPaths.machineNetworkTemplate. CREATE is validated in full; an
 * UPDATE that leaves the spec as it was (labels, annotations, finalizers) is let through without
 * validation, so that a rule added in a later version never blocks metadata edits of an existing
 * template. (The spec itself is immutable: the CRD's CEL rule refuses a change before we are asked.)
 */
export function templateAdmissionHandler(): AdmissionHandler {
  return (request: AdmissionRequest): AdmissionVerdict => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { allowed: true };
    const template = asTemplate(request.object);
    if (template === undefined) return { allowed: false, message: 'the request carries no MachineNetworkTemplate with a spec' };
    if (request.operation === 'UPDATE') {
      const old = asTemplate(request.oldObject);
      if (old !== undefined && JSON.stringify(old.spec) === JSON.stringify(template.spec)) return { allowed: true };
    }
    const result = validateTemplate(template.spec);
    const name = `${template.metadata.namespace ?? request.namespace ?? ''}/${template.metadata.name ?? request.name ?? ''}`;
    const warnings = result.warnings.length === 0 ? {} : { warnings: result.warnings };
    if (result.issues.length > 0)
      return { allowed: false, message: formatIssues(`MachineNetworkTemplate ${name}`, result.issues), ...warnings };
    return { allowed: true, ...warnings };
  };
}

/** "MachineNetworkTemplate ns/name is invalid: spec.ports[0].vlans: ...; spec...: ..." */
export function formatIssues(subject: string, issues: readonly TemplateIssue[]): string {
  return `${subject} is invalid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`;
}

function asTemplate(value: unknown): MachineNetworkTemplate | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const obj = value as Partial<MachineNetworkTemplate>;
  if (obj.metadata === undefined || obj.spec === undefined || !Array.isArray(obj.spec.ports)) return undefined;
  return obj as MachineNetworkTemplate;
}
