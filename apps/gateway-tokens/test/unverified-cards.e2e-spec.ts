import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { DataSource } from 'typeorm';
import { RpcSubjects } from '@byrd/contracts';
import { Rpc } from '@byrd/platform';
import { futureExpiry, startTestApp } from '@byrd/platform/testing';
import { AppModule, SERVICE_NAME } from '../src/app.module.js';
import { TokenVerifiedAt1766200000000 } from '../src/migrations/1766200000000-token-verified-at.js';
import { CardStore } from '../src/tokens/card-store.js';
import { ForgetUnverifiedCards } from '../src/tokens/forget-unverified-cards.sweep.js';
import { completeChallenge, TokensHarness, vaultKeys } from './harness.js';

const MASTER_CHALLENGE = '5555341244441115';
const MASTER_FRICTIONLESS = '5448280000000007';
const VISA = '4242424242424242';
/**
 * How long a verification may still succeed, for this run (production: 24 h). Longer than any set-up
 * takes on a loaded machine: a test ages its tokens past it (pastGrace) once it holds them as it needs.
 * With a short grace, the sweep (every 250 ms) could forget a token before its challenge completed.
 */
const GRACE_MS = 60_000;
const SWEEP_MS = 250;
const OLD_EXPIRY = futureExpiry(2);
const NEW_EXPIRY = futureExpiry(4);

/**
 * A card whose verification (3DS) never succeeded is not kept once that verification can no longer
 * succeed: the token is forgotten like a deleted one (404, not listed, not chargeable) and a staged
 * re-tokenization's card is dropped. What was verified, even where the vault missed hearing it, is
 * kept; a verification landing while the sweep runs wins whole or finds the token gone.
 */
describe('cards whose verification never succeeded (UNVERIFIED_CARD_GRACE_MS)', () => {
  let h: TokensHarness;
  let payments: Rpc;

  beforeAll(async () => {
    h = await TokensHarness.start({
      ...vaultKeys(),
      UNVERIFIED_CARD_GRACE_MS: String(GRACE_MS),
      UNVERIFIED_CARD_SWEEP_MS: String(SWEEP_MS),
    });
    payments = h.rpcAs('payments');
  });
  afterAll(() => h?.stop());

  const db = () => h.tokens.get(DataSource);

  /** The stored row, or null when the token (and its card) is gone from the vault. */
  async function stored(tokenId: string) {
    const [row] = await db().query<
      { verified: boolean; card: boolean; staged: boolean; expiration: string }[]
    >(
      `SELECT verified_at IS NOT NULL AS verified, card_ciphertext IS NOT NULL AS card,
              staged_card_ciphertext IS NOT NULL AS staged, expiration
         FROM card_tokens WHERE id = $1`,
      [tokenId],
    );
    return row ?? null;
  }

  /**
   * Moves tokens' card (and staged card) back in time so that their grace ends `leftMs` from now: as
   * if stored and staged that long ago, each keeping the gap between the two.
   */
  async function pastGrace(tokenIds: string[], leftMs = 0) {
    await db().query(
      `UPDATE card_tokens
          SET created_at = created_at - (coalesce(staged_at, created_at) - cutoff.at),
              staged_at = staged_at - (staged_at - cutoff.at)
         FROM (SELECT now() - make_interval(secs => $2::double precision / 1000) AS at) cutoff
        WHERE id = ANY($1)`,
      [tokenIds, GRACE_MS - leftMs],
    );
  }

  /** Sweeps of both kinds (this one's own and the app's timer) have run past the grace. */
  async function untilSwept(check: () => Promise<boolean>, what: string) {
    const deadline = Date.now() + 15_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`never ${what}`);
      await sleep(100);
    }
  }

  async function expectForgotten(tokenId: string, customReference: string) {
    expect(await stored(tokenId)).toBeNull();
    const read = await h.tokenRequest('GET', `/api/v2/tokens/${tokenId}`);
    expect(read.status).toBe(404);
    expect(read.body.code).toBe('BYRD901');
    const listed = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${customReference}`);
    expect(listed.body.data).toEqual([]);
    const charged = await h.payWithToken(tokenId);
    expect(charged.status).toBe(404);
    await expect(
      payments.call(RpcSubjects.TokensDetokenize, { merchantId: h.merchant.merchantId, tokenId }),
    ).rejects.toMatchObject({ code: 'BYRD901' });
  }

  async function expectKept(tokenId: string, expiration: string) {
    expect(await stored(tokenId)).toMatchObject({ verified: true, card: true, staged: false, expiration });
    const read = await h.tokenRequest('GET', `/api/v2/tokens/${tokenId}`);
    expect(read.status).toBe(200);
    expect(read.body.expiration).toBe(expiration);
  }

  /** A token its shopper never verified: BYRD207, and nobody comes back. */
  async function abandonedToken(headers: Record<string, string> = {}) {
    const customReference = `customer-${randomUUID()}`;
    const created = await h.createToken(
      { number: MASTER_CHALLENGE, expiration: OLD_EXPIRY },
      { CustomReference: customReference },
      headers,
    );
    expect(created.body.code).toBe('BYRD207');
    return {
      tokenId: created.body.tokenId as string,
      customReference,
      number: MASTER_CHALLENGE,
      action: created.body.action.url as string,
    };
  }

  async function verifiedToken() {
    const token = await abandonedToken();
    expect(await completeChallenge(token.action, '1234')).toContain('status=Success');
    return token;
  }

  /** The same card sent again with a new expiry: staged under a verification nobody completes. */
  async function stageAgain(token: { customReference: string; number: string }) {
    const again = await h.createToken(
      { number: token.number, expiration: NEW_EXPIRY },
      { CustomReference: token.customReference, Alias: 'New alias' },
    );
    expect(again.body.code).toBe('BYRD207');
    return again.body.action.url as string;
  }

  it('forgets a token whose shopper abandoned 3DS once the verification can no longer succeed', async () => {
    const key = `abandoned-${randomUUID()}`;
    const token = await abandonedToken({ 'idempotency-key': key });
    // Within the window it is a token like any other: read and listed (its shopper may come back).
    expect((await h.tokenRequest('GET', `/api/v2/tokens/${token.tokenId}`)).status).toBe(200);
    const listed = await h.tokenRequest('GET', `/api/v2/tokens?customReference=${token.customReference}`);
    expect(listed.body.data).toHaveLength(1);

    await pastGrace([token.tokenId]);
    await untilSwept(
      async () => (await h.tokenRequest('GET', `/api/v2/tokens/${token.tokenId}`)).status === 404,
      'forgot the abandoned card',
    );
    await expectForgotten(token.tokenId, token.customReference);
    // The create answer kept under its idempotency-key (holder, masked number) is erased with it.
    const [{ answers }] = await db().query<{ answers: number }[]>(
      `SELECT count(*)::int AS answers FROM idempotency_keys WHERE response_body ->> 'tokenId' = $1`,
      [token.tokenId],
    );
    expect(answers).toBe(0);
  });

  it('keeps every verified token: challenged, frictionless, authenticated by the merchant, saved by the hosted form', async () => {
    const challenged = await verifiedToken();
    const frictionless = await h.createToken({ number: MASTER_FRICTIONLESS, expiration: OLD_EXPIRY });
    expect(frictionless.body.code).toBe('BYRD207');
    const authenticated = await h.createToken({
      number: VISA,
      expiration: OLD_EXPIRY,
      aav: 'AAACAgSRBklmQCFgMpEGAAAAAAA=',
      eci: '05',
    });
    expect(authenticated.body.action).toBeNull();
    const saved = await payments.call(RpcSubjects.TokensCreate, {
      merchantId: h.merchant.merchantId,
      customReference: `customer-${randomUUID()}`,
      alias: null,
      card: { number: MASTER_CHALLENGE, expiration: OLD_EXPIRY, holder: 'Ana Silva' },
    });
    const abandoned = await abandonedToken();
    await pastGrace([
      challenged.tokenId,
      frictionless.body.tokenId,
      authenticated.body.tokenId,
      saved.tokenId,
      abandoned.tokenId,
    ]);

    await untilSwept(async () => (await stored(abandoned.tokenId)) === null, 'swept');
    for (const tokenId of [
      challenged.tokenId,
      frictionless.body.tokenId,
      authenticated.body.tokenId,
      saved.tokenId,
    ]) {
      await expectKept(tokenId, OLD_EXPIRY);
    }
    expect((await h.payWithToken(challenged.tokenId)).body).toMatchObject({
      code: 'BYRD200',
      status: 'Success',
    });
  });

  it('keeps a token whose verification passed when the vault missed hearing it, asking payments first', async () => {
    const token = await abandonedToken();
    const rpc = h.payments.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    let lost = 0;
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      if (subject === RpcSubjects.TokensVerified) {
        lost++;
        throw new Error('vault away');
      }
      return call(subject, request);
    }) as typeof rpc.call);
    try {
      expect(await completeChallenge(token.action, '1234')).toContain('status=Success');
    } finally {
      spy.mockRestore();
    }
    expect(lost).toBeGreaterThanOrEqual(1);
    expect(await stored(token.tokenId)).toMatchObject({ verified: false, card: true });

    await pastGrace([token.tokenId]);
    await untilSwept(
      async () => (await stored(token.tokenId))?.verified === true,
      'recorded the verification',
    );
    // More sweeps over it, all past its grace: kept.
    await h.tokens.get(ForgetUnverifiedCards).execute();
    await sleep(4 * SWEEP_MS);
    await expectKept(token.tokenId, OLD_EXPIRY);
  });

  it('forgets a token whose verification the vault died before asking payments to start', async () => {
    const rpc = h.tokens.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    const spies = [
      jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
        if (subject === RpcSubjects.PaymentsVerifyCard) throw new Error('killed while asking payments');
        return call(subject, request);
      }) as typeof rpc.call),
      // Killed: nothing takes the token back.
      jest.spyOn(h.tokens.get(CardStore), 'takeBack').mockResolvedValue(undefined),
    ];
    const customReference = `customer-${randomUUID()}`;
    try {
      const created = await h.createToken({ number: MASTER_CHALLENGE }, { CustomReference: customReference });
      expect(created.status).toBeGreaterThanOrEqual(500);
    } finally {
      spies.forEach((spy) => spy.mockRestore());
    }
    const [{ id: tokenId }] = await db().query<{ id: string }[]>(
      `SELECT id FROM card_tokens WHERE custom_reference = $1`,
      [customReference],
    );
    await pastGrace([tokenId]);
    await untilSwept(async () => (await stored(tokenId)) === null, 'forgot the card never verified');
    await expectForgotten(tokenId, customReference);
  });

  it('drops a staged card nobody verified, the token charged as it was', async () => {
    const token = await verifiedToken();
    await stageAgain(token);
    expect(await stored(token.tokenId)).toMatchObject({ staged: true, expiration: OLD_EXPIRY });

    await pastGrace([token.tokenId]);
    await untilSwept(async () => (await stored(token.tokenId))?.staged === false, 'dropped the staged card');
    await expectKept(token.tokenId, OLD_EXPIRY);
    expect((await h.payWithToken(token.tokenId)).body).toMatchObject({ code: 'BYRD200', status: 'Success' });
  });

  it('takes in a staged card whose verification passed when the vault missed hearing it', async () => {
    const token = await verifiedToken();
    const action = await stageAgain(token);
    const rpc = h.payments.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      if (subject === RpcSubjects.TokensVerified) throw new Error('vault away');
      return call(subject, request);
    }) as typeof rpc.call);
    try {
      expect(await completeChallenge(action, '1234')).toContain('status=Success');
    } finally {
      spy.mockRestore();
    }
    expect(await stored(token.tokenId)).toMatchObject({ staged: true, expiration: OLD_EXPIRY });
    await pastGrace([token.tokenId]);
    await untilSwept(async () => (await stored(token.tokenId))?.staged === false, 'settled the staged card');
    await expectKept(token.tokenId, NEW_EXPIRY);
  });

  it('forgets nothing while payments cannot say what was verified', async () => {
    const rpc = h.tokens.get(Rpc);
    const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
    const spy = jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: unknown) => {
      if (subject === RpcSubjects.PaymentsTokenVerifications) throw new Error('payments away');
      return call(subject, request);
    }) as typeof rpc.call);
    let token: Awaited<ReturnType<typeof abandonedToken>>;
    try {
      token = await abandonedToken();
      await pastGrace([token.tokenId]);
      await sleep(4 * SWEEP_MS);
      expect(await stored(token.tokenId)).toMatchObject({ verified: false, card: true });
    } finally {
      spy.mockRestore();
    }
    await untilSwept(async () => (await stored(token.tokenId)) === null, 'forgot it once payments answered');
  });

  it('backfills verified_at: tokens made without a verification are verified, the others asked of payments', async () => {
    const authenticated = await h.createToken({
      number: VISA,
      expiration: OLD_EXPIRY,
      aav: 'AAACAgSRBklmQCFgMpEGAAAAAAA=',
      eci: '05',
    });
    const challenged = await verifiedToken();
    const abandoned = await abandonedToken();
    const staged = await verifiedToken();
    await stageAgain(staged);
    // The vault as it was before migration 1766200000000, then migrated (outside a transaction, in
    // batches of two rows here), and migrated again as after a kill half-way: nothing changes.
    const runner = db().createQueryRunner();
    const batchSize = TokenVerifiedAt1766200000000.batchSize;
    try {
      const migration = new TokenVerifiedAt1766200000000();
      TokenVerifiedAt1766200000000.batchSize = 2;
      await migration.down(runner);
      await migration.up(runner);
      await migration.up(runner);
    } finally {
      TokenVerifiedAt1766200000000.batchSize = batchSize;
      await runner.release();
    }
    expect(await stored(authenticated.body.tokenId)).toMatchObject({ verified: true });
    expect(await stored(challenged.tokenId)).toMatchObject({ verified: false });
    expect(await stored(abandoned.tokenId)).toMatchObject({ verified: false });
    expect(await stored(staged.tokenId)).toMatchObject({ verified: false, staged: true });

    await pastGrace([authenticated.body.tokenId, challenged.tokenId, abandoned.tokenId, staged.tokenId]);
    await untilSwept(async () => (await stored(abandoned.tokenId)) === null, 'forgot the abandoned card');
    await untilSwept(async () => (await stored(staged.tokenId))?.staged === false, 'dropped the staged card');
    await expectForgotten(abandoned.tokenId, abandoned.customReference);
    await expectKept(authenticated.body.tokenId, OLD_EXPIRY);
    await expectKept(challenged.tokenId, OLD_EXPIRY);
    await expectKept(staged.tokenId, OLD_EXPIRY);
  });

  /**
   * Many rounds: a verification of a staged card lands (rpc.tokens.verified, as payments sends it)
   * while two vault replicas sweep: half of them right between a sweep's question to payments and
   * its change (committed first, or sent at once), half at a random moment around the end of the
   * grace. Each token either took the new card (promoted) and is kept verified with it, or was
   * forgotten / had its staged card dropped and the verification found nothing: never a
   * verification answered as taken on a token then forgotten.
   */
  it('a verification landing while two replicas sweep wins whole or finds the card gone', async () => {
    const second: { app: NestFastifyApplication } = await startTestApp(
      AppModule.forRoot(h.tokensConfig),
      SERVICE_NAME,
    );
    const sweeps = [h.tokens.get(ForgetUnverifiedCards), second.app.get(ForgetUnverifiedCards)];
    /** Each token's verification, sent once: whether it was taken in. */
    const landed = new Map<string, Promise<boolean>>();
    const verifications = new Map<string, string>();
    const land = (tokenId: string) => {
      if (!landed.has(tokenId)) {
        landed.set(
          tokenId,
          payments
            .call(RpcSubjects.TokensVerified, {
              merchantId: h.merchant.merchantId,
              tokenId,
              verificationId: verifications.get(tokenId)!,
            })
            .then((r) => r.promoted),
        );
      }
      return landed.get(tokenId)!;
    };
    /** Tokens whose verification lands while a sweep that asked payments about them has not acted yet. */
    const duringSweep = new Set<string>();
    const spies = [h.tokens, second.app].map((app) => {
      const rpc = app.get(Rpc);
      const call = rpc.call.bind(rpc) as (subject: string, request: unknown) => Promise<unknown>;
      return jest.spyOn(rpc, 'call').mockImplementation((async (subject: string, request: any) => {
        const answer = await call(subject, request);
        if (subject === RpcSubjects.PaymentsTokenVerifications) {
          const sent = (request.tokenIds as string[]).filter((id) => duringSweep.has(id)).map(land);
          if (Math.random() < 0.5) await Promise.all(sent);
        }
        return answer;
      }) as typeof rpc.call);
    });
    const outcomes = { promoted: 0, forgotten: 0, dropped: 0 };
    try {
      for (let round = 0; round < 15; round++) {
        // Unverified tokens with a staged card (forgotten whole), and verified ones (staged card dropped).
        const prepared = await Promise.all(
          [false, true, false, true].map(async (verified, i) => {
            const token = verified ? await verifiedToken() : await abandonedToken();
            await stageAgain(token);
            const [{ staged_verification_id: verificationId }] = await db().query<
              { staged_verification_id: string }[]
            >(`SELECT staged_verification_id FROM card_tokens WHERE id = $1`, [token.tokenId]);
            verifications.set(token.tokenId, verificationId);
            return { ...token, verified, timed: i >= 2 };
          }),
        );
        // All held (staged) before any is old: their grace ends 300 ms from now. A grace running out
        // during the set-up could forget a token before its card was staged.
        await pastGrace(
          prepared.map((t) => t.tokenId),
          300,
        );
        const stagedAt = Date.now() + 300 - GRACE_MS;
        prepared.filter((t) => !t.timed).forEach((t) => duringSweep.add(t.tokenId));
        const end = stagedAt + GRACE_MS + 400;
        await Promise.all([
          ...prepared
            .filter((token) => token.timed)
            .map(async (token) => {
              // Lands somewhere around the end of the grace.
              await sleep(Math.max(0, stagedAt + GRACE_MS - 300 + Math.random() * 700 - Date.now()));
              await land(token.tokenId);
            }),
          ...sweeps.map(async (sweep) => {
            while (Date.now() < end) {
              await sweep.execute();
              await sleep(Math.random() * 50);
            }
          }),
        ]);
        await Promise.all(sweeps.map((sweep) => sweep.execute()));
        for (const token of prepared) {
          const promoted = await land(token.tokenId);
          const row = await stored(token.tokenId);
          if (promoted) {
            outcomes.promoted++;
            expect(row).toMatchObject({ verified: true, card: true, staged: false, expiration: NEW_EXPIRY });
          } else if (token.verified) {
            outcomes.dropped++;
            expect(row).toMatchObject({ verified: true, card: true, staged: false, expiration: OLD_EXPIRY });
          } else {
            outcomes.forgotten++;
            expect(row).toBeNull();
            expect((await h.tokenRequest('GET', `/api/v2/tokens/${token.tokenId}`)).status).toBe(404);
          }
        }
      }
    } finally {
      spies.forEach((spy) => spy.mockRestore());
      await second.app.close();
    }
    // Both sides won some rounds: the race was run, not avoided.
    expect(outcomes.promoted).toBeGreaterThan(0);
    expect(outcomes.forgotten).toBeGreaterThan(0);
    expect(outcomes.dropped).toBeGreaterThan(0);
  }, 240_000);
});
