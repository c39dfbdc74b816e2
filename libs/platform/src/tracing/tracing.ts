import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';
import { headers, type MsgHdrs } from '@nats-io/transport-node';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
} from '@opentelemetry/sdk-trace';

export { SpanKind, SpanStatusCode, type Context, type Span };

/**
 * OpenTelemetry for one process: spans for HTTP requests, event handling, RPC and webhook attempts,
 * their context carried as W3C `traceparent` in HTTP and NATS headers and beside outbox and webhook
 * rows. The standard `OTEL_*` variables configure it: spans are exported (OTLP over HTTP, JSON) only
 * when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set (and neither
 * OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none). Without an exporter nothing is recorded,
 * but trace ids still exist, propagate and appear in the logs, so one request can be followed
 * through every service's log lines.
 */
let provider: TracerProvider | undefined;
const propagator = new W3CTraceContextPropagator();

/** Sets tracing up once per process (several test apps may share one); later calls change nothing. */
export function startTracing(serviceName: string, env: NodeJS.ProcessEnv = process.env): void {
  if (provider) return;
  const exporting = exportsSpans(env);
  provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || serviceName }),
    sampler: exporting ? samplerFrom(env) : new AlwaysOffSampler(),
    spanProcessors: exporting ? [batchProcessor(env)] : [],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(propagator);
  trace.setGlobalTracerProvider(provider);
}

/** Sends the spans still buffered (at shutdown: the last requests' spans must not be lost). */
export async function flushTraces(): Promise<void> {
  await provider?.forceFlush();
}

function exportsSpans(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

/** OTEL_BSP_* as the specification names them (the SDK's defaults where unset). */
function batchProcessor(env: NodeJS.ProcessEnv): BatchSpanProcessor {
  const number = (name: string) =>
    env[name] && Number.isFinite(Number(env[name])) ? Number(env[name]) : undefined;
  return new BatchSpanProcessor({
    exporter: new OTLPTraceExporter(),
    scheduledDelayMillis: number('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: number('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: number('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: number('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  });
}

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the specification names them. */
function samplerFrom(env: NodeJS.ProcessEnv): Sampler {
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratioSampler = () => new TraceIdRatioBasedSampler(Number.isFinite(ratio) ? ratio : 1);
  switch (env.OTEL_TRACES_SAMPLER) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratioSampler();
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratioSampler() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

const tracer = () => trace.getTracer('@byrd/platform');

/** Reads `traceparent` from plain headers (HTTP) or NATS headers alike. */
const headerGetter: TextMapGetter<unknown> = {
  keys: () => ['traceparent', 'tracestate'],
  get(carrier, key) {
    if (carrier && typeof (carrier as { get?: unknown }).get === 'function') {
      return (carrier as { get(k: string): string }).get(key) || undefined;
    }
    const value = (carrier as Record<string, string | string[] | undefined> | undefined)?.[key];
    return Array.isArray(value) ? value[0] : value;
  },
};

/** The context a caller sent (`traceparent`), or none. */
export function contextFromHeaders(headers: unknown): Context {
  return headers ? propagator.extract(ROOT_CONTEXT, headers, headerGetter) : ROOT_CONTEXT;
}

/** The context a stored `traceparent` names (an outbox or webhook row's), or none. */
export function contextFromTraceparent(traceparent: string | null | undefined): Context {
  return traceparent ? contextFromHeaders({ traceparent }) : ROOT_CONTEXT;
}

/** The W3C `traceparent` of a span, or of the current one; null when there is none. */
export function traceparentOf(span: Span | undefined = trace.getActiveSpan()): string | null {
  const spanContext = span?.spanContext();
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return null;
  const flags = spanContext.traceFlags.toString(16).padStart(2, '0');
  return `00-${spanContext.traceId}-${spanContext.spanId}-${flags}`;
}

export function startSpan(name: string, kind: SpanKind, parent: Context, attributes?: Attributes): Span {
  return tracer().startSpan(name, { kind, attributes }, parent);
}

/** Runs `work` inside `span` (its logs, calls and events become its children), ending it after. */
export async function inSpan<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(context.active(), span), work);
  } catch (error) {
    failSpan(span, error);
    throw error;
  } finally {
    span.end();
  }
}

export function failSpan(span: Span, error: unknown): void {
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: SpanStatusCode.ERROR, message: String(error) });
}

/** Runs `work` with `span` current, without ending it. */
export function withSpan<T>(span: Span, work: () => T): T {
  return context.with(trace.setSpan(context.active(), span), work);
}

/** NATS headers carrying a trace context (the current span's by default); none when there is none. */
export function natsTraceHeaders(traceparent: string | null = traceparentOf()): MsgHdrs | undefined {
  if (!traceparent) return undefined;
  const carrier = headers();
  carrier.set('traceparent', traceparent);
  return carrier;
}

/** The trace and span ids of the current span, for every log line (the OTel log field names). */
export function logTraceFields(): { trace_id?: string; span_id?: string } {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !trace.isSpanContextValid(spanContext)) return {};
  return { trace_id: spanContext.traceId, span_id: spanContext.spanId };
}
