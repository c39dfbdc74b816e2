import { Module, type DynamicModule } from '@nestjs/common';
import { RATE_LIMIT_CONFIG, type RateLimitConfig } from './rate-limit.config.js';
import { RateLimiter } from './rate-limiter.js';

/** The shared rate-limit counts (RateLimiter) for a service's guards, from its config. */
@Module({})
export class RateLimitModule {
  static forRoot(config: RateLimitConfig): DynamicModule {
    return {
      module: RateLimitModule,
      global: true,
      providers: [{ provide: RATE_LIMIT_CONFIG, useValue: config }, RateLimiter],
      exports: [RateLimiter],
    };
  }
}
