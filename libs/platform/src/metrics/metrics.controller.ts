import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { Public } from '../auth/api-key.guard.js';
import { ServiceMetrics } from './service-metrics.js';

/** Prometheus scrape endpoint. Internal: no API key, and the edge and the Ingress do not route it. */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: ServiceMetrics) {}

  @Get()
  @Header('cache-control', 'no-store')
  async scrape(@Res() reply: FastifyReply): Promise<void> {
    const body = await this.metrics.registry.metrics();
    await reply.header('content-type', this.metrics.registry.contentType).send(body);
  }
}
