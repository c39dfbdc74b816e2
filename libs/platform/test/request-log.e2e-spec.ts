import { Controller, Get, Module, Post, Body } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiProperty } from '@nestjs/swagger';
import { PinoLogger } from 'nestjs-pino';
import { loadConfig, PlatformModule, Public, setLogDestination, statelessConfigSchema } from '@byrd/platform';
import { callHttp, startTestApp, TestEnvironment } from '@byrd/platform/testing';

class Done {
  @ApiProperty({ example: true })
  done!: boolean;
}

/** Logs from inside the handler, after an await, the way a use case does. */
@Public()
@Controller('probe')
class ProbeController {
  constructor(private readonly logger: PinoLogger) {}

  @Post('work')
  @ApiOperation({ security: [] })
  @ApiCreatedResponse({ type: Done })
  async work(@Body() body: Record<string, unknown>): Promise<Done> {
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.logger.info({ body }, 'worked');
    return { done: true };
  }

  @Get('fail')
  @ApiOperation({ security: [] })
  @ApiOkResponse({ type: Done })
  fail(): Done {
    throw new Error('the probe broke');
  }
}

interface Line {
  level: number;
  msg: string;
  req?: { id: string; method: string; url: string };
  res?: { statusCode: number };
  responseTime?: number;
  trace_id?: string;
  body?: unknown;
}

describe('request log lines', () => {
  let env: TestEnvironment;
  let url: string;
  let close: () => Promise<void>;
  const written: string[] = [];
  const lines = () =>
    written
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Line);

  beforeAll(async () => {
    env = await TestEnvironment.create();
    setLogDestination({ write: (chunk: string) => void written.push(chunk) });
    const config = loadConfig(statelessConfigSchema, await env.serviceEnv('probe', { LOG_LEVEL: 'info' }));
    @Module({
      imports: [PlatformModule.forRoot({ serviceName: 'probe', config, database: false })],
      controllers: [ProbeController],
    })
    class ProbeModule {}
    const started = await startTestApp(ProbeModule, 'probe');
    url = started.url;
    close = () => started.app.close();
  });

  afterAll(async () => {
    await close?.();
    setLogDestination(undefined);
    await env?.cleanup();
  });

  const traceIdOf = (headers: Headers) => headers.get('traceparent')?.split('-')[1];

  it("names the request and its trace on the handler's lines and on the one line that closes it", async () => {
    // The body arrives after the headers, as from a slow client: it is read outside the request's
    // context, which must be entered again before the handler.
    const chunks = ['{"card":{"number":', '"4242424242424242"}}'];
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        const chunk = chunks.shift();
        if (chunk) controller.enqueue(new TextEncoder().encode(chunk));
        else controller.close();
      },
    });
    const answer = await fetch(`${url}/probe/work?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'probe-1' },
      body,
      duplex: 'half',
    });
    expect(answer.status).toBe(201);
    const ofRequest = lines().filter((line) => line.req?.id === 'probe-1');
    expect(ofRequest.map((line) => line.msg)).toEqual(['worked', 'request completed']);
    const traceId = traceIdOf(answer.headers);
    for (const line of ofRequest) {
      expect(line).toMatchObject({
        req: { id: 'probe-1', method: 'POST', url: '/probe/work?x=1' },
        trace_id: traceId,
      });
    }
    expect(ofRequest[1]).toMatchObject({ level: 30, res: { statusCode: 201 } });
    expect(ofRequest[1].responseTime).toBeGreaterThanOrEqual(5);
    expect(ofRequest[0].body).toEqual({ card: '[REDACTED]' });
    expect(written.join('')).not.toContain('4242424242424242');
  });

  it('keeps concurrent requests apart: each line names its own request', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `probe-concurrent-${i}`);
    await Promise.all(ids.map((id) => callHttp(url, 'POST', '/probe/work', { id }, { 'x-request-id': id })));
    for (const id of ids) {
      const ofRequest = lines().filter((line) => line.req?.id === id);
      expect(ofRequest.map((line) => [line.msg, line.body])).toEqual([
        ['worked', { id }],
        ['request completed', undefined],
      ]);
    }
  });

  it('closes a failed request with an error line, after the cause', async () => {
    const answer = await callHttp(url, 'GET', '/probe/fail', undefined, { 'x-request-id': 'probe-fail' });
    expect(answer.status).toBe(500);
    const ofRequest = lines().filter((line) => line.req?.id === 'probe-fail');
    expect(ofRequest.map((line) => [line.level, line.msg])).toEqual([
      [50, 'request failed'],
      [50, 'request errored'],
    ]);
    expect(ofRequest[1]).toMatchObject({ res: { statusCode: 500 } });
  });

  it('replaces a request id holding a card number by a new one, in the answer and every line', async () => {
    const pan = '4111111111111111';
    for (const sent of [pan, `order-${pan}`, '4111-1111-1111-1111']) {
      const answer = await callHttp(url, 'GET', '/probe/fail', undefined, { 'x-request-id': sent });
      expect(answer.status).toBe(500);
      const id = answer.headers.get('x-request-id')!;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(JSON.stringify(answer.body)).not.toContain(pan);
      expect(lines().filter((line) => line.req?.id === id).length).toBeGreaterThan(0);
    }
    expect(written.join('')).not.toMatch(/4111-?1111-?1111-?1111/);
    // A GUID, whose dash-joined groups can read as a card number, is kept.
    const guid = '2a8c4b5e-4917-8329-8173-1f0a2b3c4d5e';
    const kept = await callHttp(url, 'POST', '/probe/work', {}, { 'x-request-id': guid });
    expect(kept.headers.get('x-request-id')).toBe(guid);
  });

  it('writes no line for health probes', async () => {
    expect(
      (await callHttp(url, 'GET', '/health/live', undefined, { 'x-request-id': 'probe-health' })).status,
    ).toBe(200);
    expect(lines().filter((line) => line.req?.id === 'probe-health')).toEqual([]);
  });
});
