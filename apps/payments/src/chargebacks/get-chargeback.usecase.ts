import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isGuid, type ChargebackResponse } from '@byrd/contracts';
import { ApiError } from '@byrd/platform';
import { Chargeback } from './chargeback.entity.js';
import { presentChargeback } from './chargeback.presenter.js';

/** Reads one of the merchant's chargebacks; another merchant's id answers like a missing one. */
@Injectable()
export class GetChargeback {
  constructor(private readonly dataSource: DataSource) {}

  async execute(merchantId: string, chargebackId: string): Promise<ChargebackResponse> {
    const chargeback = isGuid(chargebackId)
      ? await this.dataSource.getRepository(Chargeback).findOneBy({ id: chargebackId, merchantId })
      : null;
    if (!chargeback) throw ApiError.notFound(`Chargeback ${chargebackId}`);
    return presentChargeback(chargeback);
  }
}
