import { z } from 'zod';

/** One service of the route table and the public path prefixes the edge / Ingress send to it. */
export interface RoutedService {
  service: string;
  port: number;
  prefixes: string[];
}

const prefix = z.string().regex(/^\/.*[^/]$/, 'a prefix starts with "/" and does not end with "/"');

/** deploy/routes.json (the chart's files/routes.json): the same table the edge and the Ingress route by. */
const routeTableSchema = z.object({
  services: z.record(z.string(), z.object({ port: z.number().int().min(1).max(65_535) }).loose()),
  routes: z.array(z.object({ prefix, service: z.string() }).loose()),
});

/**
 * The services of a route table with their public prefixes, in table order. A route naming a service
 * the table does not list is refused, as the edge and the chart refuse it.
 */
export function routedServices(json: string): RoutedService[] {
  const parsed = routeTableSchema.safeParse(JSON.parse(json));
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    const where = issue.path
      .map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))
      .join('');
    throw new Error(`${where.replace(/^\./, '') || 'the table'}: ${issue.message}`);
  }
  const table = parsed.data;
  const services = new Map<string, RoutedService>();
  table.routes.forEach((route, index) => {
    const entry = table.services[route.service];
    if (!entry)
      throw new Error(`routes[${index}] names service "${route.service}", which is not in "services"`);
    const known = services.get(route.service) ?? { service: route.service, port: entry.port, prefixes: [] };
    known.prefixes.push(route.prefix);
    services.set(route.service, known);
  });
  return [...services.values()];
}

/** True when `path` is routed by one of `prefixes`, at a segment boundary (as the edge routes). */
export function isRouted(path: string, prefixes: readonly string[]): boolean {
  return prefixes.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}
