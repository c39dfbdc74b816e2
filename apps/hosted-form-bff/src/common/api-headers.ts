import { Injectable, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';

const API_PREFIX = '/checkout/api/';

/** API answers (errors too) are about one shopper's order and payment: never cached, never sniffed. */
@Injectable()
export class ApiResponseHeaders implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook('onRequest', (request, reply, done) => {
      if (request.url.startsWith(API_PREFIX)) {
        void reply.header('cache-control', 'no-store').header('x-content-type-options', 'nosniff');
      }
      done();
    });
  }
}
