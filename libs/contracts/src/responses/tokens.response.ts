import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ALL_RETURN_CODES, type ReturnCode } from '../codes.js';
import { CARD_BRANDS, type CardBrand } from '../enums.js';
import type { Action } from '../dto/common.dto.js';
import type { CreateTokenResponse, TokenCardView, TokenResponse } from '../dto/tokens.dto.js';
import { ActionSchema, EXAMPLE_IDS, ListEnvelopeFields } from './common.response.js';

@ApiSchema({ name: 'TokenCardView', description: 'The card as stored (masked).' })
export class TokenCardViewSchema implements TokenCardView {
  @ApiProperty({ description: 'First six and last four digits, the rest `*`', example: '424242******4242' })
  number!: string;
  @ApiProperty({ description: 'Expiry, MM/YY', example: '12/29' })
  expiration!: string;
  @ApiProperty({ description: 'Always fully masked', type: String, nullable: true, example: '***' })
  cvv!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'Ana Silva' })
  holder!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null })
  aav!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null })
  dsTransactionId!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null })
  eci!: string | null;
  @ApiProperty({ type: String, nullable: true, example: null })
  xid!: string | null;
  @ApiProperty({ example: 'ThreeDSecure' })
  verificationMethod!: string;
  @ApiProperty({ example: 'Undefined' })
  scheme!: string;
  @ApiProperty({ example: 'Undefined' })
  usage!: string;
  @ApiProperty({
    description: 'Three-letter country code of the issuer',
    type: String,
    nullable: true,
    example: 'PRT',
  })
  countryCode!: string | null;
}

@ApiSchema({
  name: 'CreateTokenResponse',
  description: '`POST /api/v2/tokens` → 201 (code BYRD207 with `action` when 3DS verification is needed).',
})
export class CreateTokenResponseSchema implements CreateTokenResponse {
  @ApiProperty({ type: () => TokenCardViewSchema })
  card!: TokenCardView;
  @ApiProperty({ example: EXAMPLE_IDS.token })
  tokenId!: string;
  @ApiProperty({ type: String, nullable: true, example: 'shopper-77' })
  customReference!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'My Visa' })
  alias!: string | null;
  @ApiProperty({
    description: '3DS verification redirect, when needed',
    type: () => ActionSchema,
    nullable: true,
  })
  action!: Action | null;
  @ApiPropertyOptional({ enum: ALL_RETURN_CODES, example: 'BYRD200' })
  code?: ReturnCode;
  @ApiPropertyOptional({ example: 'Operation successfully completed' })
  description?: string;
}

@ApiSchema({ name: 'TokenResponse', description: 'A stored card (`GET /api/v2/tokens/{tokenId}`).' })
export class TokenResponseSchema implements TokenResponse {
  @ApiProperty({ example: EXAMPLE_IDS.token })
  tokenId!: string;
  @ApiProperty({ type: String, nullable: true, example: 'shopper-77' })
  customReference!: string | null;
  @ApiProperty({ type: String, nullable: true, example: 'My Visa' })
  alias!: string | null;
  @ApiProperty({ enum: CARD_BRANDS, example: 'VISA' })
  brand!: CardBrand;
  @ApiProperty({ description: 'Expiry, MM/YY', example: '12/29' })
  expiration!: string;
  @ApiProperty({ example: '424242******4242' })
  maskedCardNumber!: string;
  @ApiProperty({ description: "True once the card's expiry month has passed", example: false })
  isExpired!: boolean;
}

@ApiSchema({ name: 'TokenListResponse', description: 'Tokens, newest first (`GET /api/v2/tokens`).' })
export class TokenListResponseSchema extends ListEnvelopeFields {
  @ApiProperty({ type: () => [TokenResponseSchema] })
  data!: TokenResponse[];
}
