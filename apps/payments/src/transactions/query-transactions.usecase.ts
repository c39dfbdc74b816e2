import { Injectable } from '@nestjs/common';
import { DataSource, In } from 'typeorm';
import {
  DEFAULT_PAGE_SIZE,
  isGuid,
  type ListEnvelope,
  type ListTransactionsQuery,
  type TransactionResponse,
} from '@byrd/contracts';
import { ApiError } from '@byrd/platform';
import { ThreeDSSession } from '../three-ds-server/three-ds-session.entity.js';
import { ofMerchant, Transaction } from './transaction.entity.js';
import { presentTransaction } from './transaction.presenter.js';

/** Reads of a merchant's transactions; another merchant's id answers like a missing one. */
@Injectable()
export class QueryTransactions {
  constructor(private readonly dataSource: DataSource) {}

  async one(merchantId: string, transactionId: string): Promise<TransactionResponse> {
    const transaction = isGuid(transactionId)
      ? await this.dataSource
          .getRepository(Transaction)
          .findOneBy(ofMerchant(merchantId, { id: transactionId }))
      : null;
    if (!transaction) throw ApiError.notFound(`Transaction ${transactionId}`);
    const session = await this.dataSource
      .getRepository(ThreeDSSession)
      .findOneBy({ transactionId: transaction.id });
    return presentTransaction(transaction, session);
  }

  async list(merchantId: string, query: ListTransactionsQuery): Promise<ListEnvelope<TransactionResponse>> {
    if (!query.orderId && !query.orderRef)
      throw ApiError.invalidField('orderId', 'orderId or orderRef is required');
    const pageNumber = query.pageNumber ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const where = ofMerchant(merchantId, {
      ...(query.orderId ? { orderId: query.orderId } : {}),
      ...(query.orderRef ? { orderRef: query.orderRef } : {}),
    });
    const [transactions, totalAvailable] = await this.dataSource.getRepository(Transaction).findAndCount({
      where,
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: (pageNumber - 1) * pageSize,
      take: pageSize,
    });
    const sessions = transactions.length
      ? await this.dataSource
          .getRepository(ThreeDSSession)
          .findBy({ transactionId: In(transactions.map((t) => t.id)) })
      : [];
    const sessionOf = new Map(sessions.map((s) => [s.transactionId, s]));
    return {
      data: transactions.map((t) => presentTransaction(t, sessionOf.get(t.id) ?? null)),
      success: true,
      errorCode: null,
      pagination: { pageNumber, pageSize, total: transactions.length, totalAvailable },
    };
  }
}
