// OpenAPI schemas of the responses: classes that implement the response interfaces of ../dto (so a
// field added to an interface and forgotten here fails the typecheck) with @ApiProperty and examples.
// Nest's Swagger module turns them into the services' documents; the interfaces stay the types the
// code uses, so the hosted form's page (which compiles ../dto from source) never loads Swagger.
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ALL_RETURN_CODES, type ReturnCode } from '../codes.js';
import { ActionType } from '../enums.js';
import type { Action, ErrorBody, FieldError, ListPagination } from '../dto/common.dto.js';

/** Example ids, so the documents read like real answers. */
export const EXAMPLE_IDS = {
  order: '6f1c2a4e-2b1d-4d8a-9c3e-5a7b8c9d0e1f',
  transaction: 'b3e1f2a4-5c6d-4e7f-8a9b-0c1d2e3f4a5b',
  sourceTransaction: 'a2d0e1f3-4b5c-4d6e-9f8a-1b2c3d4e5f60',
  token: 'c4f2a3b5-6d7e-4f80-9a1b-2c3d4e5f6a7b',
  request: 'd5a3b4c6-7e8f-4a91-8b2c-3d4e5f6a7b8c',
  threeDSecure: 'e6b4c5d7-8f9a-4b02-9c3d-4e5f6a7b8c9d',
  checkoutKey: 'f7c5d6e8-9a0b-4c13-8d4e-5f6a7b8c9d0e',
  webhook: '08d6e7f9-0b1c-4d24-9e5f-6a7b8c9d0e1f',
  settings: '19e7f80a-1c2d-4e35-8f6a-7b8c9d0e1f2a',
  attempt: '2af8091b-2d3e-4f46-9a7b-8c9d0e1f2a3b',
  chargeback: '3b091a2c-3e4f-4057-8b8c-9d0e1f2a3b4c',
} as const;

export const EXAMPLE_TIME = '2026-11-25T10:15:30.000Z';

@ApiSchema({ name: 'FieldError', description: 'One invalid field of a rejected request.' })
export class FieldErrorSchema implements FieldError {
  @ApiProperty({ description: 'Property path as sent', example: 'card.number' })
  field!: string;

  @ApiProperty({ description: 'What is wrong with it', example: 'number must be 12 to 19 digits' })
  message!: string;
}

@ApiSchema({
  name: 'ErrorBody',
  description: 'Body of every error answer (HTTP 4xx/5xx); each operation lists the codes of each status.',
})
export class ErrorBodySchema implements ErrorBody {
  @ApiProperty({ description: 'Return code', enum: ALL_RETURN_CODES, example: 'BYRD900' })
  code!: ReturnCode;

  @ApiProperty({ description: 'Fixed text of the code', example: 'Invalid input' })
  description!: string;

  @ApiProperty({
    description: 'Human sentence about this failure',
    example: 'card.number: must be 12 to 19 digits',
  })
  message!: string;

  @ApiPropertyOptional({ description: 'Invalid fields (BYRD900)', type: () => [FieldErrorSchema] })
  errors?: FieldError[];

  @ApiProperty({ description: 'Id of the request, to quote to support', example: EXAMPLE_IDS.request })
  requestId!: string;
}

@ApiSchema({ name: 'Action', description: 'Follow-up action for the shopper (3DS redirect).' })
export class ActionSchema implements Action {
  @ApiProperty({ enum: Object.values(ActionType), example: 'redirect' })
  type!: ActionType;

  @ApiProperty({
    description: 'Address to send the shopper to',
    example: `https://gateway.example.com/3ds/authenticate/${EXAMPLE_IDS.threeDSecure}`,
  })
  url!: string;
}

@ApiSchema({ name: 'ListPagination', description: 'Paging block of the gateway lists.' })
export class ListPaginationSchema implements ListPagination {
  @ApiProperty({ description: '1-based page returned', example: 1 })
  pageNumber!: number;

  @ApiProperty({ description: 'Page size used', example: 20 })
  pageSize!: number;

  @ApiProperty({ description: 'Items in this page', example: 1 })
  total!: number;

  @ApiProperty({ description: 'Items matching the query over all pages', example: 1 })
  totalAvailable!: number;
}

/** The `success` and `errorCode` of the gateway list envelope (`data` and `pagination` beside them). */
export class ListEnvelopeFields {
  @ApiProperty({ description: 'True on success', example: true })
  success!: boolean;

  @ApiProperty({ description: 'Null on success', type: String, nullable: true, example: null })
  errorCode!: string | null;

  @ApiProperty({ type: () => ListPaginationSchema })
  pagination!: ListPagination;
}
