import { Body, Controller, Header, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ThreeDSAuthRequest, ThreeDSPreAuthRequest } from '@byrd/contracts';
import { Public } from '@byrd/platform';
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
  @ApiOperation({ summary: "Record the shopper's browser; where the issuer's 3DS Method runs" })
  async preAuth(@Param('id') id: string, @Body() body: ThreeDSPreAuthRequest) {
    return { data: await this.authentication.preAuth(id, body) };
  }

  @Post('v1/:id/auth')
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  @ApiOperation({ summary: 'Authenticate: the challenge page, or none when frictionless' })
  async auth(@Param('id') id: string, @Body() body: ThreeDSAuthRequest) {
    return { data: await this.authentication.auth(id, body) };
  }

  @Post('v2/:id/postAuth')
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  @ApiOperation({ summary: 'The authentication and payment outcome; 409 while the challenge is unanswered' })
  async postAuth(@Param('id') id: string) {
    return { data: await this.authentication.postAuth(id) };
  }
}
