import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ALL_RETURN_CODES, type ReturnCode } from '../codes.js';
import { VerificationMethod } from '../enums.js';
import type {
  ThreeDSAuthenticationData,
  ThreeDSAuthResponse,
  ThreeDSPostAuthResponse,
  ThreeDSPreAuthResponse,
} from '../dto/three-ds.dto.js';
import { EXAMPLE_IDS } from './common.response.js';

// The SDK protocol wraps every 2xx answer as `{ data }` (the public 3DS SDK reads `response.data`).

@ApiSchema({ name: 'ThreeDSPreAuthResponse' })
export class ThreeDSPreAuthResponseSchema implements ThreeDSPreAuthResponse {
  @ApiProperty({ example: EXAMPLE_IDS.threeDSecure })
  id!: string;
  @ApiProperty({ description: 'threeDSServerTransID', example: EXAMPLE_IDS.request })
  processId!: string;
  @ApiProperty({
    description: 'Where the SDK posts threeDSMethodData; empty when the issuer has none',
    example: 'https://gateway.example.com/3ds/acs/method',
  })
  dsMethodUrl!: string;
  @ApiProperty({
    description: 'threeDSMethodNotificationURL',
    example: 'https://gateway.example.com/3ds/notification',
  })
  notificationUrl!: string;
}

@ApiSchema({ name: 'ThreeDSPreAuthAnswer', description: '`POST {threeds_url}/api/v2/{id}/preAuth` → 200.' })
export class ThreeDSPreAuthAnswer {
  @ApiProperty({ type: () => ThreeDSPreAuthResponseSchema })
  data!: ThreeDSPreAuthResponse;
}

@ApiSchema({ name: 'ThreeDSAuthResponse' })
export class ThreeDSAuthResponseSchema implements ThreeDSAuthResponse {
  @ApiProperty({ example: EXAMPLE_IDS.threeDSecure })
  id!: string;
  @ApiProperty({ example: EXAMPLE_IDS.request })
  processId!: string;
  @ApiProperty({ description: 'acsTransID of the challenge', example: EXAMPLE_IDS.attempt })
  challengeId!: string;
  @ApiProperty({ example: '2.2.0' })
  challengeVersion!: string;
  @ApiProperty({ description: 'Issuer challenge page; empty when frictionless', example: '' })
  challengeUrl!: string;
}

@ApiSchema({ name: 'ThreeDSAuthAnswer', description: '`POST {threeds_url}/api/v1/{id}/auth` → 200.' })
export class ThreeDSAuthAnswer {
  @ApiProperty({ type: () => ThreeDSAuthResponseSchema })
  data!: ThreeDSAuthResponse;
}

@ApiSchema({ name: 'ThreeDSAuthenticationData' })
export class ThreeDSAuthenticationDataSchema implements ThreeDSAuthenticationData {
  @ApiProperty({ enum: ['V2'], example: 'V2' })
  threeDsVersion!: 'V2';
  @ApiProperty({ type: String, nullable: true, example: 'AAABBEg0VhI0VniQEjRWAAAAAAA=' })
  aav!: string | null;
  @ApiProperty({ type: String, nullable: true, example: EXAMPLE_IDS.request })
  dsTransactionId!: string | null;
  @ApiProperty({ type: String, nullable: true, example: '05' })
  eci!: string | null;
  @ApiProperty({ enum: Object.values(VerificationMethod), example: 'ThreeDSecure' })
  verificationMethod!: VerificationMethod;
  @ApiProperty({ example: '2.2.0' })
  protocolVersion!: string;
}

@ApiSchema({ name: 'ThreeDSPostAuthResponse' })
export class ThreeDSPostAuthResponseSchema implements ThreeDSPostAuthResponse {
  @ApiProperty({ example: EXAMPLE_IDS.transaction })
  transactionId!: string;
  @ApiProperty({ example: 'https://shop.example.com/return' })
  callbackUrl!: string;
  @ApiProperty({ enum: ['Authorized', 'Unauthorized', 'Expired', 'NotEnrolled'], example: 'Authorized' })
  status!: ThreeDSPostAuthResponse['status'];
  @ApiProperty({
    enum: ['Y', 'N'],
    example: 'Y',
    description:
      'Y when the payment went on to the acquirer (authenticated, or card not enrolled), N otherwise: ' +
      'as `executePayment`. The EMV transStatus (Y, N, U, ...) is on GET /api/v2/transactions/{id}.',
  })
  transStatus!: ThreeDSPostAuthResponse['transStatus'];
  @ApiProperty({
    type: String,
    nullable: true,
    example: null,
    description: 'EMV transStatusReason, when given (e.g. 13: card not enrolled)',
  })
  transStatusReason!: string | null;
  @ApiProperty({ type: () => ThreeDSAuthenticationDataSchema })
  authenticationData!: ThreeDSAuthenticationData;
  @ApiProperty({ example: true })
  executePayment!: boolean;
  @ApiProperty({ enum: ['Success', 'Denied', 'Error'], example: 'Success' })
  paymentStatus!: ThreeDSPostAuthResponse['paymentStatus'];
  @ApiProperty({ enum: ALL_RETURN_CODES, example: 'BYRD200' })
  code!: ReturnCode;
  @ApiProperty({ example: 'Operation successfully completed' })
  message!: string;
}

@ApiSchema({
  name: 'ThreeDSPostAuthAnswer',
  description:
    '`POST {threeds_url}/api/v2/{id}/postAuth` → 200 (409 BYRD201 while the challenge is unanswered).',
})
export class ThreeDSPostAuthAnswer {
  @ApiProperty({ type: () => ThreeDSPostAuthResponseSchema })
  data!: ThreeDSPostAuthResponse;
}
