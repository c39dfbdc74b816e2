import { Body, Controller, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import {
  ThreeDSAuthAnswer,
  ThreeDSAuthRequest,
  ThreeDSPostAuthAnswer,
  ThreeDSPreAuthAnswer,
  ThreeDSPreAuthRequest,
  type DataEnvelope,
  type ThreeDSAuthResponse,
  type ThreeDSPostAuthResponse,
  type ThreeDSPreAuthResponse,
} from '@byrd/contracts';
import { ApiErrors, NOT_FOUND, Public, GuidParam } from '@byrd/platform';
import { BrowserAuthentication } from './browser-authentication.usecase.js';

/**
 * The 3DS browser SDK protocol ({threeds_url}/api/...), called from shoppers' browsers: no API key,
 * the unguessable `threeDSecure.id` is the credential. Every 2xx answer is wrapped as `{ data }`:
 * the public 3DS SDK reads `response.data` (errors keep the platform's error body).
 */
@ApiTags('3ds')
@Public()
@Controller('3ds/api')
export class ThreeDSProtocolController {
  constructor(private readonly authentication: BrowserAuthentication) {}

  @Post('v2/:id/preAuth')
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  @ApiOperation({ summary: "Record the shopper's browser; where the issuer's 3DS Method runs", security: [] })
  @ApiOkResponse({ type: ThreeDSPreAuthAnswer })
  @ApiErrors(NOT_FOUND)
  async preAuth(
    @Param('id', GuidParam.notFound('3DS authentication')) id: string,
    @Body() body: ThreeDSPreAuthRequest,
  ): Promise<DataEnvelope<ThreeDSPreAuthResponse>> {
    return { data: await this.authentication.preAuth(id, body) };
  }

  @Post('v1/:id/auth')
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  @ApiOperation({ summary: 'Authenticate: the challenge page, or none when frictionless', security: [] })
  @ApiOkResponse({ type: ThreeDSAuthAnswer })
  @ApiErrors(NOT_FOUND)
  async auth(
    @Param('id', GuidParam.notFound('3DS authentication')) id: string,
    @Body() body: ThreeDSAuthRequest,
  ): Promise<DataEnvelope<ThreeDSAuthResponse>> {
    return { data: await this.authentication.auth(id, body) };
  }

  @Post('v2/:id/postAuth')
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  @ApiOperation({
    summary: 'The authentication and payment outcome; 409 while the challenge is unanswered',
    security: [],
  })
  @ApiOkResponse({ type: ThreeDSPostAuthAnswer })
  // 409 BYRD201: the shopper has not answered the challenge, or the payment is still running (the SDK retries).
  @ApiErrors({ 404: ['BYRD901'], 409: ['BYRD201'] })
  async postAuth(
    @Param('id', GuidParam.notFound('3DS authentication')) id: string,
  ): Promise<DataEnvelope<ThreeDSPostAuthResponse>> {
    return { data: await this.authentication.postAuth(id) };
  }
}
