import type { DataSource, EntityManager } from 'typeorm';
import type { SettingsSecrets, SettingsSecretValues } from './settings-secrets.js';

/** Passes over the settings before giving up on rows that keep being sealed with an older key. */
const MAX_PASSES = 10;
/** Between passes, so the requests holding rows the last one skipped can finish (by default). */
const PASS_PAUSE_MS = 100;
/** Below every random (v4) id: where a pass starts. */
const FIRST_ID = '00000000-0000-0000-0000-000000000000';

export interface ResealSecretsCommand {
  /** Settings read per query, and at most locked per transaction. */
  batchSize: number;
  /** After each transaction that re-sealed something: the total so far. */
  onBatch?: (resealedSoFar: number) => void;
  /** The pause between two passes (PASS_PAUSE_MS unless given: a test's runs need not sit it out). */
  passPauseMs?: number;
}

export interface ResealSecretsResult {
  resealed: number;
  /** Settings no configured key opens, left as they are. */
  unopenable: { id: string; reason: string }[];
  /**
   * Settings the last pass still found sealed with an older key (0 when done): something keeps
   * sealing with one, e.g. a replica whose WEBHOOK_SECRETS_KEYS does not start with the new key.
   */
  stillOld: number;
}

type SecretColumns = { id: string; api_key: string | null; password: string | null; signing_secret: string };

const values = (row: SecretColumns): SettingsSecretValues => ({
  id: row.id,
  apiKey: row.api_key,
  password: row.password,
  signingSecret: row.signing_secret,
});

/**
 * Seals every setting's credentials and signing secret again with the first key of
 * WEBHOOK_SECRETS_KEYS, so the older keys can be removed (docs/operations.md, "Webhook secrets'
 * keys"). Deleted settings too: their webhooks' attempts still show the credential.
 *
 * While the service serves: a pass reads the settings in id order without locking, then locks only
 * the ones under an older key (FOR UPDATE SKIP LOCKED: a row a request is writing, or another run
 * holds, is left to a later pass) and re-seals what it reads under that lock, in one short
 * transaction per batch. Any other write to a setting (its deletion, new values sealed by the
 * service) therefore lands either before (and is what gets re-sealed) or after (and stays): a newer
 * value is never replaced by an older one. Killed at any point, a batch is committed whole or not
 * at all; running it again finishes the job. It ends with a pass that finds nothing under an older
 * key.
 */
export class ResealSecrets {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: SettingsSecrets,
  ) {}

  async execute(command: ResealSecretsCommand): Promise<ResealSecretsResult> {
    const unopenable = new Map<string, string>();
    let resealed = 0;
    let stillOld = 0;
    for (let pass = 1; pass <= MAX_PASSES; pass++) {
      if (pass > 1) await new Promise((resolve) => setTimeout(resolve, command.passPauseMs ?? PASS_PAUSE_MS));
      stillOld = 0;
      for (let after = FIRST_ID; ;) {
        const rows = await this.dataSource.query<SecretColumns[]>(
          `SELECT id, api_key, password, signing_secret FROM webhook_settings
           WHERE id > $1 ORDER BY id LIMIT $2`,
          [after, command.batchSize],
        );
        if (rows.length === 0) break;
        after = rows[rows.length - 1].id;
        const old = rows.filter((row) => !unopenable.has(row.id) && this.secrets.needsResealing(values(row)));
        if (old.length === 0) continue;
        stillOld += old.length;
        const ids = old.map((row) => row.id);
        const count = await this.dataSource.transaction((manager) =>
          this.resealLocked(manager, ids, unopenable),
        );
        if (count > 0) command.onBatch?.((resealed += count));
      }
      if (stillOld === 0) break;
    }
    return { resealed, unopenable: [...unopenable].map(([id, reason]) => ({ id, reason })), stillOld };
  }

  /** Re-seals those of `ids` it can lock, from their values as they are now; returns how many. */
  private async resealLocked(
    manager: EntityManager,
    ids: string[],
    unopenable: Map<string, string>,
  ): Promise<number> {
    // The values are read again under the lock: the unlocked read may be older than a merchant's write.
    const locked = await manager.query<SecretColumns[]>(
      `SELECT id, api_key, password, signing_secret FROM webhook_settings
       WHERE id = ANY ($1::uuid[]) ORDER BY id FOR UPDATE SKIP LOCKED`,
      [ids],
    );
    const next: SettingsSecretValues[] = [];
    for (const row of locked) {
      if (!this.secrets.needsResealing(values(row))) continue; // another run or a write got there first
      try {
        next.push(this.secrets.resealRow(values(row)));
      } catch (error) {
        unopenable.set(row.id, (error as Error).message);
      }
    }
    if (next.length === 0) return 0;
    await manager.query(
      `UPDATE webhook_settings AS s
       SET api_key = n.api_key, password = n.password, signing_secret = n.signing_secret
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS n (id, api_key, password, signing_secret)
       WHERE s.id = n.id`,
      [
        next.map((n) => n.id),
        next.map((n) => n.apiKey),
        next.map((n) => n.password),
        next.map((n) => n.signingSecret),
      ],
    );
    return next.length;
  }
}
