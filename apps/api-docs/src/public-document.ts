import openapiMerge, { type MergeInput, type OpenApiDocument } from 'openapi-merge';
import { isRouted } from './route-table.js';

export interface DocumentSource {
  service: string;
  /** Base URL of the service, e.g. http://byrd-orders:3001. */
  url: string;
  prefixes: string[];
}

export interface PublicDocument {
  /** Absent when no service answered. */
  document?: OpenApiDocument & { 'x-unavailable-services'?: string[] };
  /** Services that did not answer /docs/json (the document says so). */
  unavailable: string[];
}

const TITLE = 'Byrd payment platform: public API';

/** A service's document with only its publicly routed paths. */
export function publicPart(document: OpenApiDocument, prefixes: readonly string[]): OpenApiDocument {
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).filter(([path]) => isRouted(path, prefixes)),
  );
  return { ...document, paths };
}

async function fetchDocument(source: DocumentSource, timeoutMs: number): Promise<OpenApiDocument> {
  const response = await fetch(`${source.url}/docs/json`, { signal: AbortSignal.timeout(timeoutMs) });
  if (!response.ok) throw new Error(`${source.service} answered ${response.status}`);
  return (await response.json()) as OpenApiDocument;
}

/**
 * The merged document of the services that answered (identical schemas shared, clashing ones renamed
 * per service by openapi-merge); those that did not are named in its description and in
 * `x-unavailable-services`, so a partial document never passes for whole.
 */
export async function mergePublicDocument(
  sources: DocumentSource[],
  timeoutMs: number,
): Promise<PublicDocument> {
  const fetched = await Promise.allSettled(sources.map((source) => fetchDocument(source, timeoutMs)));
  const inputs: MergeInput = [];
  const unavailable: string[] = [];
  fetched.forEach((result, index) => {
    const { service, prefixes } = sources[index];
    if (result.status === 'rejected') unavailable.push(service);
    else inputs.push({ oas: publicPart(result.value, prefixes), dispute: { prefix: pascalCase(service) } });
  });
  if (inputs.length === 0) return { unavailable };
  const info = {
    title: TITLE,
    version: inputs[0].oas.info?.version ?? '2.0',
    description: describe(inputs[0].oas, unavailable),
  };
  const merged = openapiMerge.merge(inputs, { pruneUnusedComponents: true, info });
  if (openapiMerge.isErrorResult(merged)) {
    throw new Error(`The services' documents do not merge: ${merged.type}: ${merged.message}`);
  }
  const document = merged.output;
  return {
    document: unavailable.length ? { ...document, 'x-unavailable-services': unavailable } : document,
    unavailable,
  };
}

/** The document's own sentence, then the platform's error table (the same in every service's description). */
function describe(document: OpenApiDocument, unavailable: string[]): string {
  const description = document.info?.description ?? '';
  const errors = description.slice(Math.max(0, description.indexOf('Errors answer')));
  const missing = unavailable.length
    ? `\n\n**Not included: ${unavailable.join(', ')} did not answer; reload when it runs.**`
    : '';
  return `Every public path of the platform, as the edge and the Ingress route it (deploy/routes.json).${missing}\n\n${errors}`;
}

function pascalCase(name: string): string {
  return name.replace(/(^|-)(\w)/g, (_, __, letter: string) => letter.toUpperCase());
}

/**
 * Merges on demand, at most once at a time (concurrent readers share one merge), and keeps a complete
 * document for `cacheSeconds`: /docs/json is public, and each merge asks every service, so a flood of
 * readers must not become a flood on the services. A partial document is never kept.
 */
export class PublicDocumentCache {
  private current?: { value: PublicDocument; until: number };
  private inFlight?: Promise<PublicDocument>;

  constructor(
    private readonly sources: DocumentSource[],
    private readonly options: { fetchTimeoutMs: number; cacheSeconds: number },
    private readonly now: () => number = Date.now,
  ) {}

  get(): Promise<PublicDocument> {
    if (this.current && this.current.until > this.now()) return Promise.resolve(this.current.value);
    this.inFlight ??= mergePublicDocument(this.sources, this.options.fetchTimeoutMs)
      .then((value) => {
        if (value.unavailable.length === 0) {
          this.current = { value, until: this.now() + this.options.cacheSeconds * 1000 };
        }
        return value;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }
}
