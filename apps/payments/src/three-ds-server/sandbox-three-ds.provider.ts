import { Injectable } from '@nestjs/common';
import type { CardBrand } from '@byrd/contracts';
import { sandboxCard } from '../acquirer/sandbox-rules.js';
import { eciFor, pooledRandomBytes } from '@byrd/platform';
import {
  type AuthenticationResult,
  type AuthenticationStart,
  type ThreeDSProvider,
} from './three-ds-provider.js';

/** The one-time password the sandbox issuer accepts. */
export const SANDBOX_OTP = '1234';

/** Sandbox 3DS server + ACS: test cards decide frictionless, challenge, not enrolled or unauthorized. */
@Injectable()
export class SandboxThreeDSProvider implements ThreeDSProvider {
  async start(card: { number: string; brand: CardBrand }): Promise<AuthenticationStart> {
    switch (sandboxCard(card.number).threeDS) {
      case 'challenge':
        return { kind: 'challenge' };
      case 'not-enrolled':
        return {
          kind: 'frictionless',
          result: {
            status: 'NotEnrolled',
            transStatus: 'U',
            transStatusReason: '13',
            eci: eciFor(card.brand, 'none'),
            aav: null,
          },
        };
      case 'unauthorized':
        return {
          kind: 'frictionless',
          result: {
            status: 'Unauthorized',
            transStatus: 'N',
            transStatusReason: '01',
            eci: eciFor(card.brand, 'none'),
            aav: null,
          },
        };
      case 'frictionless':
        return { kind: 'frictionless', result: authenticated(card.brand) };
    }
  }

  async answerChallenge(
    card: { number: string; brand: CardBrand },
    answer: string,
  ): Promise<AuthenticationResult> {
    if (answer === SANDBOX_OTP) return authenticated(card.brand);
    return {
      status: 'Unauthorized',
      transStatus: 'N',
      transStatusReason: '01',
      eci: eciFor(card.brand, 'none'),
      aav: null,
    };
  }

  acsUrls(threeDSBaseUrl: string): { methodUrl: string; challengeUrl: string } {
    // The sandbox issuer's pages are served by this service (three-ds/acs.controller.ts).
    return { methodUrl: `${threeDSBaseUrl}/acs/method`, challengeUrl: `${threeDSBaseUrl}/acs/challenge` };
  }

  abandoned(brand: CardBrand, reason: 'canceled' | 'expired'): AuthenticationResult {
    return {
      status: reason === 'expired' ? 'Expired' : 'Unauthorized',
      transStatus: 'N',
      // EMV 3DS transStatusReason: 14 = transaction timed out at the ACS, 19 = canceled by cardholder
      transStatusReason: reason === 'expired' ? '14' : '19',
      eci: eciFor(brand, 'none'),
      aav: null,
    };
  }
}

function authenticated(brand: CardBrand): AuthenticationResult {
  // A CAVV/AAV is a 20-byte cryptogram, base64 on the wire.
  return {
    status: 'Authorized',
    transStatus: 'Y',
    transStatusReason: null,
    eci: eciFor(brand, 'authenticated'),
    aav: pooledRandomBytes(20).toString('base64'),
  };
}
