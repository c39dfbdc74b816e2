import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type {
  DetokenizedCard,
  DetokenizeRpcRequest,
  ListTokensQuery,
  TokenListResponse,
  TokenResponse,
  TokenVerifiedResult,
  TokenVerifiedRpcRequest,
} from '@byrd/contracts';
import { ApiError, pageOfRows, storeAnswerWithWork, type KeyClaim } from '@byrd/platform';
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

  async execute(merchantId: string, filters: ListTokensQuery): Promise<TokenListResponse> {
    const pageNumber = filters.pageNumber ?? 1;
    const pageSize = filters.pageSize ?? DEFAULT_PAGE_SIZE;
    const now = new Date();
    const query = this.dataSource
      .getRepository(CardToken)
      .createQueryBuilder('t')
      .where('t.merchant_id = :merchantId', { merchantId });
    if (filters.customReference !== undefined)
      query.andWhere('t.custom_reference = :customReference', { customReference: filters.customReference });
    if (filters.isExpired !== undefined)
      query.andWhere(filters.isExpired ? 't.expires_at <= :now' : 't.expires_at > :now', { now });
    query.orderBy('t.created_at', 'DESC').addOrderBy('t.id', 'ASC');
    const [tokens, totalAvailable] = await pageOfRows(query, (pageNumber - 1) * pageSize, pageSize);
    return {
      data: tokens.map((token) => presentToken(token, now)),
      success: true,
      errorCode: null,
      pagination: { pageNumber, pageSize, total: tokens.length, totalAvailable },
    };
  }
}

/** How long a deleted card is remembered (card_deletions): far past payments' last try to save one. */
const DELETION_MEMORY = '1 day';

/**
 * Remembers that the merchant deleted this card (for its customer reference), so a "save my card" of
 * a payment made before, arriving late, does not bring it back (SaveAuthenticatedCard); forgets
 * the merchant's deletions older than DELETION_MEMORY.
 */
async function recordDeletion(
  manager: EntityManager,
  merchantId: string,
  card: { ref: string; fingerprint: Buffer },
): Promise<void> {
  await manager.query(
    `INSERT INTO card_deletions (merchant_id, custom_reference, fingerprint, deleted_at)
     VALUES ($1, $2, $3, now())
     ON CONFLICT (merchant_id, custom_reference, fingerprint) DO UPDATE SET deleted_at = now()`,
    [merchantId, card.ref, card.fingerprint],
  );
  await manager.query(
    `DELETE FROM card_deletions WHERE merchant_id = $1 AND deleted_at < now() - interval '${DELETION_MEMORY}'`,
    [merchantId],
  );
}

/**
 * `DELETE /api/v2/tokens/{tokenId}`: the card is erased, ciphertext and all, and with it the create
 * answers kept for retries of idempotency-keys, which echo its holder, masked number, expiry and 3DS
 * values. A retry of such a key then runs as a new request. An answer stored after this commits (a
 * create that was still asking for its verification) is not kept: migration 1765600000000. The
 * deletion is remembered for a day (recordDeletion).
 */
@Injectable()
export class DeleteToken {
  constructor(
    private readonly dataSource: DataSource,
    private readonly metrics: VaultMetrics,
  ) {}

  /** `claim`: the request's idempotency-key, whose answer (204) commits with the delete. */
  execute(merchantId: string, tokenId: string, claim?: KeyClaim): Promise<void> {
    return this.metrics.measure('delete', () =>
      this.dataSource.transaction(async (manager) => {
        const [deleted] = await manager.query<[{ ref: string; fingerprint: Buffer }[], number]>(
          `DELETE FROM card_tokens WHERE id = $1 AND merchant_id = $2
           RETURNING coalesce(custom_reference, '') AS ref, fingerprint`,
          [tokenId, merchantId],
        );
        if (deleted.length === 0) throw ApiError.notFound(`Token ${tokenId}`);
        await recordDeletion(manager, merchantId, deleted[0]);
        // By the index of answers naming a token (migration 1765300000200).
        await manager.query(
          `DELETE FROM idempotency_keys
            WHERE merchant_id = $1 AND response_body ? 'tokenId' AND response_body ->> 'tokenId' = $2`,
          [merchantId, tokenId],
        );
        // Else a retry after a death between the commit and the answer would find nothing: 404.
        await storeAnswerWithWork(manager, claim, 204, null);
      }),
    );
  }
}

/**
 * `rpc.tokens.detokenize` (payments only): the card behind a token, for one authorisation; or the
 * card a re-tokenization staged under `verificationId`, for that verification to authenticate.
 */
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

  private async open({
    merchantId,
    tokenId,
    verificationId,
  }: DetokenizeRpcRequest): Promise<DetokenizedCard> {
    const token = await this.dataSource
      .getRepository(CardToken)
      .createQueryBuilder('token')
      .addSelect(['token.cardCiphertext', 'token.wrappedKey', 'token.stagedCardCiphertext'])
      .where('token.id = :tokenId AND token.merchant_id = :merchantId', { tokenId, merchantId })
      .getOne();
    if (!token) throw ApiError.notFound(`Token ${tokenId}`);
    const staged = verificationId !== undefined && verificationId === token.stagedVerificationId;
    const card = this.cipher.open(token.id, {
      ciphertext: staged ? token.stagedCardCiphertext! : token.cardCiphertext,
      wrappedKey: token.wrappedKey,
      kekId: token.kekId,
    });
    const expiresAt = staged ? token.stagedExpiresAt! : token.expiresAt;
    return {
      tokenId: token.id,
      number: card.number,
      expiration: card.expiration,
      holder: card.holder,
      brand: token.brand,
      isExpired: presentToken({ ...token, expiresAt }).isExpired,
      verificationId: staged ? verificationId : token.verificationId,
      stagedVerificationId: token.stagedVerificationId,
    };
  }
}

/**
 * `rpc.tokens.verified` (payments only): a verification of the token succeeded. The token is
 * verified from now on (`verified_at`: never forgotten as unverified, ForgetUnverifiedCards), and
 * the card staged under that verification, if it still waits there, becomes the token's card. One
 * statement under the row lock: a reader sees the old card or the new one whole, and a sweep
 * forgetting the token at the same moment either deletes it first (nothing is promoted) or finds
 * it verified and leaves it. Payments asks when the verification ends and again before charging the
 * token, so a crash in between only delays it; asking twice is a no-op.
 */
@Injectable()
export class PromoteVerifiedCard {
  constructor(private readonly dataSource: DataSource) {}

  async execute({
    merchantId,
    tokenId,
    verificationId,
  }: TokenVerifiedRpcRequest): Promise<TokenVerifiedResult> {
    // An UPDATE answers [rows it returned, rows it changed].
    const [rows] = await this.dataSource.query<[{ promoted: boolean }[], number]>(
      `WITH target AS (
         SELECT id, coalesce(staged_verification_id = $3, false) AS promote
           FROM card_tokens WHERE id = $1 AND merchant_id = $2 FOR UPDATE)
       UPDATE card_tokens t
          SET card_ciphertext = CASE WHEN promote THEN staged_card_ciphertext ELSE card_ciphertext END,
              expiration = CASE WHEN promote THEN staged_expiration ELSE expiration END,
              expires_at = CASE WHEN promote THEN staged_expires_at ELSE expires_at END,
              alias = CASE WHEN promote THEN staged_alias ELSE alias END,
              transaction_mode = CASE WHEN promote THEN staged_transaction_mode ELSE transaction_mode END,
              verification_id = CASE WHEN promote THEN staged_verification_id ELSE verification_id END,
              staged_verification_id = CASE WHEN promote THEN NULL ELSE staged_verification_id END,
              staged_card_ciphertext = CASE WHEN promote THEN NULL ELSE staged_card_ciphertext END,
              staged_expiration = CASE WHEN promote THEN NULL ELSE staged_expiration END,
              staged_expires_at = CASE WHEN promote THEN NULL ELSE staged_expires_at END,
              staged_alias = CASE WHEN promote THEN NULL ELSE staged_alias END,
              staged_transaction_mode = CASE WHEN promote THEN NULL ELSE staged_transaction_mode END,
              staged_at = CASE WHEN promote THEN NULL ELSE staged_at END,
              verified_at = coalesce(verified_at, now()),
              updated_at = now()
         FROM target
        WHERE t.id = target.id AND (promote OR t.verified_at IS NULL)
       RETURNING promote AS promoted`,
      [tokenId, merchantId, verificationId],
    );
    return { promoted: rows.length > 0 && rows[0].promoted };
  }
}
