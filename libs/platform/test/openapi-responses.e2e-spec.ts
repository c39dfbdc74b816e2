import { Controller, Get, Module, Param } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty } from '@nestjs/swagger';
import {
  ApiError,
  ApiErrors,
  ErrorKind,
  loadConfig,
  NOT_FOUND,
  PlatformModule,
  Public,
  statelessConfigSchema,
} from '@byrd/platform';
import { callHttp, startTestApp, TestEnvironment } from '@byrd/platform/testing';

class Count {
  @ApiProperty({ example: 1 })
  count!: number;
}

/** Answers what its path asks for: as documented, off its schema, or with an undocumented status. */
@Public()
@Controller('probe')
class ProbeController {
  @Get(':answer')
  @ApiOperation({ security: [] })
  @ApiOkResponse({ type: Count })
  @ApiErrors(NOT_FOUND)
  read(@Param('answer') answer: string): Count {
    if (answer === 'missing') throw ApiError.notFound('The probe');
    if (answer === 'refused') throw new ApiError(ErrorKind.BusinessRule, 'No', { code: 'BYRD205' });
    return { count: answer === 'documented' ? 1 : ('one' as unknown as number) };
  }
}

/** startTestApp checks every answer against the app's own OpenAPI document: real app, real NATS. */
describe('answers checked against the OpenAPI document', () => {
  let env: TestEnvironment;
  let probeModule: unknown;

  beforeAll(async () => {
    env = await TestEnvironment.create();
    const config = loadConfig(statelessConfigSchema, await env.serviceEnv('probe'));
    @Module({
      imports: [PlatformModule.forRoot({ serviceName: 'probe', config, database: false })],
      controllers: [ProbeController],
    })
    class ProbeModule {}
    probeModule = ProbeModule;
  });

  afterAll(() => env?.cleanup());

  async function closeAfter(...paths: string[]): Promise<void> {
    const { app, url } = await startTestApp(probeModule, 'probe');
    for (const path of paths) await callHttp(url, 'GET', path);
    await app.close();
  }

  it('lets a suite whose answers the document describes close', async () => {
    await expect(closeAfter('/probe/documented', '/probe/missing')).resolves.toBeUndefined();
  });

  it('fails the suite at close when a body is off its schema, naming the field', async () => {
    await expect(closeAfter('/probe/documented', '/probe/off-schema')).rejects.toThrow(
      /probe gave 1 answer\(s\) its OpenAPI document does not describe:\nGET \/probe\/:answer -> 200: \/count must be number/,
    );
  });

  it('fails the suite at close when a status is not documented', async () => {
    await expect(closeAfter('/probe/refused')).rejects.toThrow(/-> 422: status 422 is not documented/);
  });
});
