import { Inject, Injectable, Logger, Module } from '@nestjs/common';
import { SecretBox } from '@byrd/platform';
import { WEBHOOK_CONFIG, type WebhookConfig } from '../config.js';
import type { WebhookSettingsRow } from '../settings/webhook-settings.entity.js';

type SealedColumn = 'api_key' | 'password' | 'signing_secret';

/** The sealed part of a setting (with its id, which every value is bound to). */
export type SettingsSecretValues = Pick<WebhookSettingsRow, 'id' | 'apiKey' | 'password' | 'signingSecret'>;

/** Opened values kept in memory, so a setting's thousandth delivery does not decrypt again. */
const OPENED_CACHE_SIZE = 10_000;

/** What the merchant reads in a setting whose secrets no configured key opens (`credential.unavailable`). */
export const SECRETS_UNAVAILABLE =
  "This setting's credential and signing secret cannot be read: they were sealed with a key the service no " +
  'longer holds, so its webhooks are not sent: they wait, none of their attempts used, and go out once the ' +
  'key is back. Ask the operator to restore the key, or delete the setting and subscribe the URL again.';

/** A setting as answered: opened, or with its secrets null and `unavailable` set (openRowForAnswer). */
export type AnsweredSecrets<Row extends SettingsSecretValues> = Row & { unavailable?: string };

/**
 * The credentials a setting sends to its receiver and its signing secret are stored sealed
 * (AES-256-GCM, keys WEBHOOK_SECRETS_KEYS): with them anyone could forge "paid" webhooks to a
 * merchant, so a copy of the database alone must not reveal them. Each value is bound to its row and
 * column.
 */
@Injectable()
export class SettingsSecrets {
  private readonly logger = new Logger(SettingsSecrets.name);
  private readonly box: SecretBox;
  private readonly opened = new Map<string, string>();

  constructor(@Inject(WEBHOOK_CONFIG) config: Pick<WebhookConfig, 'WEBHOOK_SECRETS_KEYS'>) {
    this.box = SecretBox.fromBase64List(config.WEBHOOK_SECRETS_KEYS);
  }

  seal(settingsId: string, column: SealedColumn, value: string): string;
  seal(settingsId: string, column: SealedColumn, value: string | null): string | null;
  seal(settingsId: string, column: SealedColumn, value: string | null): string | null {
    return value === null ? null : this.box.seal(value, `webhook_settings:${settingsId}:${column}`);
  }

  open(settingsId: string, column: SealedColumn, value: string): string;
  open(settingsId: string, column: SealedColumn, value: string | null): string | null;
  open(settingsId: string, column: SealedColumn, value: string | null): string | null {
    if (value === null) return null;
    const context = `webhook_settings:${settingsId}:${column}`;
    const key = `${context}:${value}`;
    let plain = this.opened.get(key);
    if (plain === undefined) {
      plain = this.box.open(value, context);
      if (this.opened.size >= OPENED_CACHE_SIZE) this.opened.clear();
      this.opened.set(key, plain);
    }
    return plain;
  }

  /** The row as stored: its secrets sealed. */
  sealRow<Row extends SettingsSecretValues>(row: Row): Row {
    return {
      ...row,
      apiKey: this.seal(row.id, 'api_key', row.apiKey),
      password: this.seal(row.id, 'password', row.password),
      signingSecret: this.seal(row.id, 'signing_secret', row.signingSecret),
    };
  }

  /** The row as read: its secrets in clear, for the merchant's API answers and for delivery. */
  openRow<Row extends SettingsSecretValues>(row: Row): Row {
    return {
      ...row,
      apiKey: this.open(row.id, 'api_key', row.apiKey),
      password: this.open(row.id, 'password', row.password),
      signingSecret: this.open(row.id, 'signing_secret', row.signingSecret),
    };
  }

  /**
   * The row for an API answer: as openRow, or, when no configured key opens one of its values (its
   * key was removed from WEBHOOK_SECRETS_KEYS before `reseal-secrets` re-sealed it), with the sealed
   * values null and `unavailable` set, so the merchant still sees (and can delete) the setting and the
   * rest of a list, instead of a 500.
   */
  openRowForAnswer<Row extends SettingsSecretValues>(row: Row): AnsweredSecrets<Row> {
    try {
      return this.openRow(row);
    } catch (error) {
      this.logger.warn(`Setting ${row.id}: its secrets cannot be opened: ${(error as Error).message}`);
      return { ...row, apiKey: null, password: null, signingSecret: '', unavailable: SECRETS_UNAVAILABLE };
    }
  }

  /** Whether a value of the row was sealed with another key than the first (rotation). */
  needsResealing(row: SettingsSecretValues): boolean {
    return [row.apiKey, row.password, row.signingSecret].some(
      (value) => value !== null && this.box.needsResealing(value),
    );
  }

  /**
   * The row's values sealed again with the first key (ResealSecrets). Throws when no configured key
   * opens one of them.
   */
  resealRow<Row extends SettingsSecretValues>(row: Row): Row {
    return this.sealRow(this.openRow(row));
  }
}

@Module({ providers: [SettingsSecrets], exports: [SettingsSecrets] })
export class SecretsModule {}
