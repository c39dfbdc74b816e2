import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { CreateTokenRequest, ListTokensQuery, TokenIdParam } from '@byrd/contracts';
import { CurrentMerchant, type MerchantContext } from '@byrd/platform';
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
  create(@CurrentMerchant() merchant: MerchantContext, @Body() body: CreateTokenRequest) {
    return this.createToken.execute(merchant, body);
  }

  @Get()
  @ApiOperation({ summary: 'List tokens by customReference and isExpired, newest first' })
  list(@CurrentMerchant() merchant: MerchantContext, @Query() query: ListTokensQuery) {
    return this.listTokens.execute(merchant.merchantId, query);
  }

  @Get(':tokenId')
  @ApiOperation({ summary: 'Read a token: brand, expiration, masked card number' })
  read(@CurrentMerchant() merchant: MerchantContext, @Param() { tokenId }: TokenIdParam) {
    return this.getToken.execute(merchant.merchantId, tokenId);
  }

  @Delete(':tokenId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a token: the stored card is erased' })
  remove(@CurrentMerchant() merchant: MerchantContext, @Param() { tokenId }: TokenIdParam) {
    return this.deleteToken.execute(merchant.merchantId, tokenId);
  }
}
