import { Injectable } from '@nestjs/common';
import { DataSource, LessThanOrEqual, MoreThan, type FindOptionsWhere } from 'typeorm';
import type {
  DetokenizedCard,
  DetokenizeRpcRequest,
  ListTokensQuery,
  TokenListResponse,
  TokenResponse,
} from '@byrd/contracts';
import { ApiError } from '@byrd/platform';
import { CardCipher } from '../vault/card-cipher.js';
import { VaultMetrics } from '../vault/vault-metrics.js';
import { CardToken } from './card-token.entity.js';
import { presentToken } from './token.presenter.js';

const DEFAULT_PAGE_SIZE = 20;

/** Another merchant's token answers exactly like a missing one (no existence leak). */
async function findToken(dataSource: DataSource, merchantId: string, tokenId: string): Promise<CardToken> {
  const token = await dataSource.getRepository(CardToken).findOneBy({ id: tokenId, merchantId });
  if (!token) throw ApiError.notFound(`Token ${tokenId}`);
  return token;
}

/** `GET /api/v2/tokens/{tokenId}`. */
@Injectable()
export class GetToken {
  constructor(private readonly dataSource: DataSource) {}

  async execute(merchantId: string, tokenId: string): Promise<TokenResponse> {
    return presentToken(await findToken(this.dataSource, merchantId, tokenId));
  }
}

/** `GET /api/v2/tokens?customReference=&isExpired=`: newest first, in the gateway's list envelope. */
@Injectable()
export class ListTokens {
  constructor(private readonly dataSource: DataSource) {}

  async execute(merchantId: string, query: ListTokensQuery): Promise<TokenListResponse> {
    const pageNumber = query.pageNumber ?? 1;
    const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
    const now = new Date();
    const where: FindOptionsWhere<CardToken> = {
      merchantId,
      ...(query.customReference !== undefined ? { customReference: query.customReference } : {}),
      ...(query.isExpired !== undefined
        ? { expiresAt: query.isExpired ? LessThanOrEqual(now) : MoreThan(now) }
        : {}),
    };
    const [tokens, totalAvailable] = await this.dataSource.getRepository(CardToken).findAndCount({
      where,
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: (pageNumber - 1) * pageSize,
      take: pageSize,
    });
    return {
      data: tokens.map((token) => presentToken(token, now)),
      success: true,
      errorCode: null,
      pagination: { pageNumber, pageSize, total: tokens.length, totalAvailable },
    };
  }
}

/**
 * `DELETE /api/v2/tokens/{tokenId}`: the card is erased, ciphertext and all, and with it the create
 * answers kept for retries of idempotency-keys, which echo its holder, masked number, expiry and 3DS
 * values. A retry of such a key then runs as a new request. An answer stored after this commits (a
 * create that was still asking for its verification) is not kept: migration 1765600000000.
 */
@Injectable()
export class DeleteToken {
  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: VaultMetrics,
  ) {}

  execute(merchantId: string, tokenId: string): Promise<void> {
    return this.metrics.measure('delete', () =>
      this.dataSource.transaction(async (manager) => {
        const { affected } = await manager.delete(CardToken, { id: tokenId, merchantId });
        if (!affected) throw ApiError.notFound(`Token ${tokenId}`);
        // By the index of answers naming a token (migration 1765300000200).
        await manager.query(
          `DELETE FROM idempotency_keys
            WHERE merchant_id = $1 AND response_body ? 'tokenId' AND response_body ->> 'tokenId' = $2`,
          [merchantId, tokenId],
        );
      }),
    );
  }
}

/** `rpc.tokens.detokenize` (payments only): the card behind a token, for one authorisation. */
@Injectable()
export class Detokenize {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cipher: CardCipher,
    private readonly metrics: VaultMetrics,
  ) {}

  execute(request: DetokenizeRpcRequest): Promise<DetokenizedCard> {
    return this.metrics.measure('detokenize', () => this.open(request));
  }

  private async open({ merchantId, tokenId }: DetokenizeRpcRequest): Promise<DetokenizedCard> {
    const token = await this.dataSource
      .getRepository(CardToken)
      .createQueryBuilder('token')
      .addSelect(['token.cardCiphertext', 'token.wrappedKey'])
      .where('token.id = :tokenId AND token.merchant_id = :merchantId', { tokenId, merchantId })
      .getOne();
    if (!token) throw ApiError.notFound(`Token ${tokenId}`);
    const card = this.cipher.open(token.id, {
      ciphertext: token.cardCiphertext,
      wrappedKey: token.wrappedKey,
      kekId: token.kekId,
    });
    return {
      tokenId: token.id,
      number: card.number,
      expiration: card.expiration,
      holder: card.holder,
      brand: token.brand,
      isExpired: presentToken(token).isExpired,
      verificationId: token.verificationId,
    };
  }
}
