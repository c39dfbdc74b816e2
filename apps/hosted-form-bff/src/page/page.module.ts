import { Inject, Injectable, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { RateLimiter } from '@byrd/platform';
import { CHECKOUT_CONFIG, type CheckoutConfig } from '../config.js';
import { checkoutPage } from './checkout-page.js';
import { OrderEmbedders } from './order-embedders.usecase.js';

export const WEB_DIR = Symbol('WEB_DIR');

/**
 * Mounts the static page on the app's Fastify instance before it starts listening. At bootstrap,
 * not module init: loading a plugin makes Fastify settle the routes declared so far, and Nest's
 * routes must first get Nest's error handler (set after the init hooks), or a malformed body would
 * be answered by Fastify's default handler instead of the uniform error body.
 */
@Injectable()
class CheckoutPageMount implements OnApplicationBootstrap {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly embedders: OrderEmbedders,
    private readonly limiter: RateLimiter,
    @Inject(CHECKOUT_CONFIG) private readonly config: CheckoutConfig,
    @Inject(WEB_DIR) private readonly webDir: string,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    await fastify.register(checkoutPage, {
      webDir: this.webDir,
      threeDSecureSdkUrl: this.config.THREE_DS_SDK_URL,
      frameAncestors: this.config.CHECKOUT_FRAME_ANCESTORS,
      orderFrameAncestors: (orderId) => this.embedders.frameAncestors(orderId),
      countRequest: (request) => this.limiter.check(request, ['api']),
    });
  }
}

@Module({})
export class CheckoutPageModule {
  static forRoot(webDir: string) {
    return {
      module: CheckoutPageModule,
      providers: [{ provide: WEB_DIR, useValue: webDir }, OrderEmbedders, CheckoutPageMount],
    };
  }
}
