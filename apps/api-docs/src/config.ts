import { z } from 'zod';
import { routedServices, type RoutedService } from './route-table.js';

export const SERVICE_NAME = 'api-docs';

const schema = z.object({
  HTTP_HOST: z.string().default('0.0.0.0'),
  HTTP_PORT: z.coerce.number().int().min(0).max(65_535).default(3006),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(10_000),
  /** The route table itself (JSON of deploy/routes.json): which services are public, on which paths. */
  ROUTE_TABLE: z.string().min(1),
  /** Where a service of the table answers, e.g. http://byrd-{service}:{port} (in-cluster Services). */
  UPSTREAM_URL_TEMPLATE: z
    .string()
    .regex(/^https?:\/\/.*\{port\}/, 'an http(s) URL containing {port} (and usually {service})'),
  /** How long one service may take to answer /docs/json before the document goes without it. */
  DOCS_FETCH_TIMEOUT_MS: z.coerce.number().int().min(100).default(3_000),
  /** How long a complete merged document is served before the services are asked again. */
  DOCS_CACHE_SECONDS: z.coerce.number().int().min(0).default(30),
});

export interface ApiDocsConfig {
  host: string;
  port: number;
  logLevel: z.infer<typeof schema>['LOG_LEVEL'];
  shutdownGraceMs: number;
  /** The routed services whose documents are merged (not this one). */
  services: { service: string; url: string; prefixes: string[] }[];
  fetchTimeoutMs: number;
  cacheSeconds: number;
}

/**
 * Reads the environment; a bad variable stops the service with a sentence naming it. A variable set
 * to the empty string counts as unset, as in every service (its default applies, never 0).
 */
export function loadConfig(given: NodeJS.ProcessEnv = process.env): ApiDocsConfig {
  const env = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== ''));
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.');
      return env[name] ? `${name} is invalid: ${issue.message}.` : `${name} is required but not set.`;
    });
    throw new Error(`Cannot start: ${problems.join(' ')}`);
  }
  const values = parsed.data;
  let routed: RoutedService[];
  try {
    routed = routedServices(values.ROUTE_TABLE);
  } catch (error) {
    throw new Error(`Cannot start: ROUTE_TABLE is invalid: ${(error as Error).message}`, { cause: error });
  }
  return {
    host: values.HTTP_HOST,
    port: values.HTTP_PORT,
    logLevel: values.LOG_LEVEL,
    shutdownGraceMs: values.SHUTDOWN_GRACE_MS,
    services: routed
      .filter(({ service }) => service !== SERVICE_NAME)
      .map(({ service, port, prefixes }) => ({
        service,
        url: values.UPSTREAM_URL_TEMPLATE.replaceAll('{service}', service).replaceAll('{port}', String(port)),
        prefixes,
      })),
    fetchTimeoutMs: values.DOCS_FETCH_TIMEOUT_MS,
    cacheSeconds: values.DOCS_CACHE_SECONDS,
  };
}
