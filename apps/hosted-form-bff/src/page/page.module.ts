import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { CHECKOUT_CONFIG, type CheckoutConfig } from '../config.js';
import { checkoutPage } from './checkout-page.js';

export const WEB_DIR = Symbol('WEB_DIR');

/** Mounts the static page on the app's Fastify instance before it starts listening. */
@Injectable()
class CheckoutPageMount implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(CHECKOUT_CONFIG) private readonly config: CheckoutConfig,
    @Inject(WEB_DIR) private readonly webDir: string,
  ) {}

  async onModuleInit(): Promise<void> {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    await fastify.register(checkoutPage, {
      webDir: this.webDir,
      threeDSecureSdkUrl: this.config.THREE_DS_SDK_URL,
      frameAncestors: this.config.CHECKOUT_FRAME_ANCESTORS,
    });
  }
}

@Module({})
export class CheckoutPageModule {
  static forRoot(webDir: string) {
    return {
      module: CheckoutPageModule,
      providers: [{ provide: WEB_DIR, useValue: webDir }, CheckoutPageMount],
    };
  }
}
