import type { Project } from '../models.js';
import type { SimulatorStore } from '../store.js';
import type { ProjectWire } from '../wire.js';
import { hrefOf, link } from './common.js';

export function renderProject(store: SimulatorStore, p: Project): ProjectWire {
  return {
    id: p.id,
    href: hrefOf('projects', p.id),
    name: p.name,
    created_at: p.createdAt,
    updated_at: p.createdAt,
    type: 'default',
    tags: [],
    backend_transfer_enabled: false,
    devices: [...store.devices.values()].filter((d) => d.projectId === p.id).map((d) => link('devices', d.id)),
  };
}
