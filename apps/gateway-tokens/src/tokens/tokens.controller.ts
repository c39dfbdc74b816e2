import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import {
  CreateTokenRequest,
  CreateTokenResponseSchema,
  ListTokensQuery,
  TokenListResponseSchema,
  TokenResponseSchema,
  type CreateTokenResponse,
  type TokenListResponse,
  type TokenResponse,
} from '@byrd/contracts';
import {
  ApiErrors,
  CurrentMerchant,
  GuidParam,
  keyClaimOf,
  NOT_FOUND,
  type AuthenticatedRequest,
  type MerchantContext,
} from '@byrd/platform';
import { CreateToken } from './create-token.usecase.js';
import { DeleteToken, GetToken, ListTokens } from './token-queries.usecases.js';

@ApiTags('tokens')
@Controller('api/v2/tokens')
export class TokensController {
  constructor(
    private readonly createToken: CreateToken,
    private readonly getToken: GetToken,
    private readonly listTokens: ListTokens,
    private readonly deleteToken: DeleteToken,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Store a card as a token (BYRD207 + action: verify the cardholder with 3DS)' })
  @ApiCreatedResponse({ type: CreateTokenResponseSchema })
  // The cardholder verification runs in the payments service: its refusals, or its absence.
  @ApiErrors({ 422: ['BYRD240', 'BYRD291'], 503: ['BYRD999'] })
  create(
    @CurrentMerchant() merchant: MerchantContext,
    @Body() body: CreateTokenRequest,
  ): Promise<CreateTokenResponse> {
    return this.createToken.execute(merchant, body);
  }

  @Get()
  @ApiOperation({ summary: 'List tokens by customReference and isExpired, newest first' })
  @ApiOkResponse({ type: TokenListResponseSchema })
  list(
    @CurrentMerchant() merchant: MerchantContext,
    @Query() query: ListTokensQuery,
  ): Promise<TokenListResponse> {
    return this.listTokens.execute(merchant.merchantId, query);
  }

  @Get(':tokenId')
  @ApiOperation({ summary: 'Read a token: brand, expiration, masked card number' })
  @ApiOkResponse({ type: TokenResponseSchema })
  @ApiErrors(NOT_FOUND)
  read(
    @CurrentMerchant() merchant: MerchantContext,
    @Param('tokenId', GuidParam.invalid('tokenId')) tokenId: string,
  ): Promise<TokenResponse> {
    return this.getToken.execute(merchant.merchantId, tokenId);
  }

  @Delete(':tokenId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a token: the stored card is erased' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors(NOT_FOUND)
  remove(
    @Req() request: AuthenticatedRequest,
    @CurrentMerchant() merchant: MerchantContext,
    @Param('tokenId', GuidParam.invalid('tokenId')) tokenId: string,
  ): Promise<void> {
    return this.deleteToken.execute(merchant.merchantId, tokenId, keyClaimOf(request));
  }
}
