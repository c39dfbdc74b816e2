import { Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { PaymentsModule } from '../payments/payments.module.js';
import { AuthenticationSessions } from './authentication-sessions.js';
import { BrowserAccessMiddleware } from './browser-access.middleware.js';
import { BrowserAuthentication } from './browser-authentication.usecase.js';
import { CompleteAuthentication } from './complete-authentication.usecase.js';
import { HostedPagesController } from './hosted-pages.controller.js';
import { SandboxAcsController } from './sandbox-acs.controller.js';
import { SandboxAcs } from './sandbox-acs.usecase.js';
import { SdkBundle } from './sdk-bundle.js';
import { ThreeDSLinks } from './three-ds-links.js';
import { ThreeDSProtocolController } from './three-ds-protocol.controller.js';

/**
 * 3D Secure in the shopper's browser, under /3ds: the SDK protocol, our SDK bundle, the hosted page
 * behind `action.url`, and the sandbox issuer's pages. Form posts (application/x-www-form-urlencoded)
 * are taken only by the routes marked `@TakesFormPosts()` (the platform refuses them elsewhere).
 */
@Module({
  imports: [PaymentsModule],
  controllers: [ThreeDSProtocolController, HostedPagesController, SandboxAcsController],
  providers: [
    AuthenticationSessions,
    BrowserAuthentication,
    CompleteAuthentication,
    SandboxAcs,
    SdkBundle,
    ThreeDSLinks,
  ],
})
export class ThreeDSModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(BrowserAccessMiddleware)
      .forRoutes(
        { path: '3ds/api/*path', method: RequestMethod.ALL },
        { path: '3ds/sdk.js', method: RequestMethod.GET },
      );
  }
}
