export { admissionResponse, escapeJsonPointer } from './admission.js';
export type { AdmissionHandler, AdmissionRequest, AdmissionVerdict, JsonPatchOperation } from './admission.js';
export { AdmissionServer } from './admission-server.js';
export type { AdmissionServerOptions } from './admission-server.js';
