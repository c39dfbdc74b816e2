import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  callService,
  freePort,
  futureExpiry,
  startServiceProcess,
  TestEnvironment,
  type ServiceProcess,
  type TestMerchant,
} from '@byrd/platform/testing';
import { TEST_WEBHOOK_ENV } from './harness.js';
import { Receiver } from './receiver.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const appDist = (app: string) => path.resolve(here, '../..', app, 'dist');

/** Runs a command to its end without blocking the event loop (so several can run at once). */
const execFileAsync = promisify(execFile);

interface CollectedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

/** An OTLP/HTTP (JSON) trace receiver, as an OpenTelemetry Collector would be. */
class SpanCollector {
  readonly spans: CollectedSpan[] = [];
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<SpanCollector> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const collector = new SpanCollector(
      server,
      `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    );
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.url === '/v1/traces') collector.add(JSON.parse(Buffer.concat(chunks).toString()));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    return collector;
  }

  private add(request: any): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = resourceSpans.resource.attributes.find((a: any) => a.key === 'service.name')?.value
        .stringValue;
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            attributes: Object.fromEntries(
              (span.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0]]),
            ),
          });
        }
      }
    }
  }

  async waitFor(find: (spans: CollectedSpan[]) => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!find(this.spans)) {
      if (Date.now() > deadline) {
        const seen = this.spans
          .map((s) => `${s.service}: ${s.name} ${s.traceId}/${s.spanId} <- ${s.parentSpanId}`)
          .join('\n');
        throw new Error(`Never collected ${what}; spans seen:\n${seen}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Issue 18: one trace follows a payment from the merchant's request through payments, its outbox
 * and NATS, orders' consumer and its own event, to webhook-service's consumer and the webhook's HTTP
 * attempt; every service runs as its own process, exporting to a real OTLP endpoint.
 */
describe('tracing across services (OpenTelemetry)', () => {
  let env: TestEnvironment;
  let merchant: TestMerchant;
  let collector: SpanCollector;
  let receiver: Receiver;
  const services: Record<string, ServiceProcess> = {};

  beforeAll(async () => {
    env = await TestEnvironment.create();
    merchant = await env.createMerchant('Traced Shop');
    collector = await SpanCollector.start();
    receiver = await Receiver.start();
    const common = {
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      ...TEST_WEBHOOK_ENV,
    };
    // The three start side by side (separate databases; none needs another to start): on two cores
    // their migrations and boots overlap instead of running one after another.
    await Promise.all(
      ['orders', 'payments', 'webhook-service'].map(async (service) => {
        const port = await freePort();
        const vars = await env.serviceEnv(service, {
          ...common,
          HTTP_PORT: String(port),
          PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        });
        await execFileAsync(process.execPath, [path.join(appDist(service), 'migrate.js')], {
          env: { PATH: process.env.PATH, ...vars },
        }).catch((error: { stderr?: string; stdout?: string }) => {
          throw new Error(`${service} migrations: ${error.stderr}${error.stdout}`);
        });
        services[service] = await startServiceProcess(path.join(appDist(service), 'main.js'), vars);
      }),
    );
  }, 90_000);

  afterAll(async () => {
    await Promise.all(
      Object.values(services).map((service) => {
        service.child.kill('SIGTERM');
        return service.exited();
      }),
    );
    await receiver?.stop();
    await collector?.close();
    await env?.cleanup();
  });

  it('follows a payment from the merchant request to the order.paid webhook attempt in one trace', async () => {
    const subscribed = await callService(
      services['webhook-service'].url,
      merchant.apiKey,
      'POST',
      '/api/v1/settings',
      {
        url: receiver.url,
        credentialType: 'api-key',
        events: ['order.paid'],
      },
    );
    expect(subscribed.status).toBe(201);
    const order = await callService(services.orders.url, merchant.apiKey, 'POST', '/api/v2/orders', {
      amount: '25.00',
      currency: 'EUR',
      orderRef: 'traced-1',
      orderOptions: { redirectUrl: 'https://shop.example.com/return' },
    });
    expect(order.status).toBe(201);

    // The merchant's own trace: our request joins it, and the answer names the span it got.
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const paid = await callService(
      services.payments.url,
      merchant.apiKey,
      'POST',
      '/api/v2/payment',
      {
        type: 'card',
        amount: '25.00',
        currency: 'EUR',
        orderId: order.body.orderId,
        card: { number: '4242424242424242', expiration: futureExpiry(), cvv: '123', holder: 'Ana Silva' },
      },
      { traceparent: `00-${traceId}-${callerSpanId}-01` },
    );
    expect(paid.body).toMatchObject({ code: 'BYRD200' });
    const answered = paid.headers.get('traceparent');
    expect(answered).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    expect(answered).not.toContain(callerSpanId);

    await receiver.waitFor((r) => r.some((request) => request.json.event === 'order.paid'));
    const inTrace = (spans: CollectedSpan[]) => spans.filter((s) => s.traceId === traceId);
    const find = (spans: CollectedSpan[], service: string, name: string) =>
      inTrace(spans).find((s) => s.service === service && s.name === name);
    await collector.waitFor(
      (spans) => find(spans, 'webhook-service', 'webhook attempt') !== undefined,
      'the webhook attempt in the trace',
    );

    const spans = collector.spans;
    const request = find(spans, 'payments', 'POST /api/v2/payment')!;
    const ordersHandling = find(spans, 'orders', 'transaction.payment.success process')!;
    const webhookHandling = find(spans, 'webhook-service', 'order.paid process')!;
    const attempt = find(spans, 'webhook-service', 'webhook attempt')!;
    // Each step is the child of the one before it: HTTP -> outbox/NATS -> orders -> NATS -> webhooks.
    expect({
      request: request?.parentSpanId,
      orders: ordersHandling?.parentSpanId,
      webhooks: webhookHandling?.parentSpanId,
      attempt: attempt.parentSpanId,
    }).toEqual({
      request: callerSpanId,
      orders: request.spanId,
      webhooks: ordersHandling.spanId,
      attempt: webhookHandling.spanId,
    });
    expect(`00-${traceId}-${request.spanId}-01`).toBe(answered);
    expect(attempt.attributes).toMatchObject({
      'byrd.webhook.event': 'order.paid',
      'http.response.status_code': 200,
    });
    expect(new Set(inTrace(spans).map((s) => s.service))).toEqual(
      new Set(['payments', 'orders', 'webhook-service']),
    );

    // The trace id is on the request's log lines, so logs and traces meet.
    const requestLog = services.payments
      .output()
      .split('\n')
      .filter((line) => line.includes('"url":"/api/v2/payment"'));
    expect(requestLog.length).toBeGreaterThan(0);
    for (const line of requestLog) expect(JSON.parse(line)).toMatchObject({ trace_id: traceId });
  });
});
