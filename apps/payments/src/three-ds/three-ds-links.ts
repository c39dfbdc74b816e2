import { Inject, Injectable } from '@nestjs/common';
import { PAYMENTS_CONFIG, type PaymentsConfig } from '../config.js';

/** Public addresses of the 3DS pages and API ({threeds_url} = PUBLIC_BASE_URL + /3ds). */
@Injectable()
export class ThreeDSLinks {
  constructor(@Inject(PAYMENTS_CONFIG) private readonly config: PaymentsConfig) {}

  /** {threeds_url}; read on each call, so it always follows the configured public base. */
  get base(): string {
    return `${this.config.PUBLIC_BASE_URL.replace(/\/+$/, '')}/3ds`;
  }

  get origin(): string {
    return new URL(this.config.PUBLIC_BASE_URL).origin;
  }

  /** Our 3DS server's notification URL: the ACS posts threeDSMethodData and the CRes here. */
  get notification(): string {
    return `${this.base}/notification`;
  }
}
