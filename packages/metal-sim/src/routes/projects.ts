import { canAccess, param, requireProject } from '../access.js';
import { json, route, type RouteDef } from '../http.js';
import { paginate, readPage } from '../pagination.js';
import { renderProject } from '../render/project.js';

export const projectRoutes: readonly RouteDef[] = [
  route('findProjects', 'GET /projects', (ctx) => {
    const name = ctx.req.query.get('name');
    const visible = [...ctx.store.projects.values()].filter((p) => canAccess(ctx.grant, p.id) && (name === null || p.name === name));
    const page = paginate(visible, ctx.req, readPage(ctx.req, { perPage: 10, maxPerPage: 1000 }));
    return json(200, { projects: page.items.map((p) => renderProject(ctx.store, p)), meta: page.meta });
  }),
  route('findProjectById', 'GET /projects/{id}', (ctx) => json(200, renderProject(ctx.store, requireProject(ctx, param(ctx, 'id'))))),
];
