import { Injectable } from '@nestjs/common';
import type { CheckoutOriginsResponse } from '@byrd/contracts';
import { ApiError, MerchantDirectory, type MerchantContext } from '@byrd/platform';

/** The merchant's checkout origins, as stored on its record (MERCHANTS bucket). */
@Injectable()
export class GetCheckoutOrigins {
  constructor(private readonly merchants: MerchantDirectory) {}

  async execute(merchant: MerchantContext): Promise<CheckoutOriginsResponse> {
    const record = await this.merchants.get(merchant.merchantId);
    if (!record) throw ApiError.notFound(`Merchant ${merchant.merchantId}`);
    return { origins: record.checkoutOrigins ?? [] };
  }
}

/** Replaces them: each entry checked and normalised, or a 400 naming the one refused. */
@Injectable()
export class SetCheckoutOrigins {
  constructor(private readonly merchants: MerchantDirectory) {}

  async execute(merchant: MerchantContext, origins: string[]): Promise<CheckoutOriginsResponse> {
    let stored: string[] | null;
    try {
      stored = await this.merchants.setCheckoutOrigins(merchant.merchantId, origins);
    } catch (error) {
      if (error instanceof RangeError) throw ApiError.invalidField('origins', error.message);
      throw error;
    }
    if (!stored) throw ApiError.notFound(`Merchant ${merchant.merchantId}`);
    return { origins: stored };
  }
}
