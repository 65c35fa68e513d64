// Matches a request path against the route table. Literal segments beat parameters, so
// `/ports/{id}/vlan-assignments/batches` wins over `/ports/{id}/vlan-assignments/{assignment_id}`.

import type { HttpMethod, RouteDef } from './http.js';

export interface RouteMatch {
  readonly route: RouteDef;
  readonly params: Record<string, string>;
}

interface Compiled {
  readonly route: RouteDef;
  readonly segments: readonly ({ readonly literal: string } | { readonly param: string })[];
  readonly literals: number;
}

export class Router {
  private readonly compiled: Compiled[];

  constructor(routes: readonly RouteDef[]) {
    this.compiled = routes
      .map((route) => {
        const segments = route.path
          .split('/')
          .filter((s) => s !== '')
          .map((s) => (s.startsWith('{') && s.endsWith('}') ? { param: s.slice(1, -1) } : { literal: s }));
        return { route, segments, literals: segments.filter((s) => 'literal' in s).length };
      })
      .sort((a, b) => b.literals - a.literals);
  }

  /** The route for method + path, or why there is none (the path exists with another method). */
  match(method: HttpMethod, path: string): RouteMatch | { readonly methodNotAllowed: boolean } {
    const parts = path.split('/').filter((s) => s !== '');
    let pathKnown = false;
    for (const c of this.compiled) {
      const params = matchSegments(c.segments, parts);
      if (params === undefined) continue;
      if (c.route.method === method) return { route: c.route, params };
      pathKnown = true;
    }
    return { methodNotAllowed: pathKnown };
  }

  routes(): RouteDef[] {
    return this.compiled.map((c) => c.route);
  }
}

function matchSegments(segments: Compiled['segments'], parts: readonly string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i];
    const part = parts[i];
    if (seg === undefined || part === undefined) return undefined;
    if ('literal' in seg) {
      if (seg.literal !== part) return undefined;
    } else {
      params[seg.param] = decodeURIComponent(part);
    }
  }
  return params;
}
