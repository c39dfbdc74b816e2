import { z } from 'zod';
import { baseConfigSchema } from '@byrd/platform';
import { parseKeks } from './vault/key-ring.js';

const base64Key = z
  .string()
  .refine((v) => Buffer.from(v, 'base64').length === 32, { message: 'must be 32 bytes, base64-encoded' });

export const vaultKeysSchema = z
  .object({
    /**
     * Key-encryption keys, `id:base64,...` (32-byte AES keys). From a Kubernetes Secret or the
     * environment, never from the repository; npm start generates a development one.
     */
    VAULT_KEKS: z.string().superRefine((value, context) => {
      try {
        parseKeks(value);
      } catch (error) {
        context.addIssue({ code: 'custom', message: (error as Error).message });
      }
    }),
    /** Id of the KEK that wraps new data keys; default the first of VAULT_KEKS. */
    VAULT_ACTIVE_KEK: z.string().optional(),
  })
  .refine(
    (keys) => {
      try {
        return (
          !keys.VAULT_ACTIVE_KEK || parseKeks(keys.VAULT_KEKS).some((k) => k.id === keys.VAULT_ACTIVE_KEK)
        );
      } catch {
        return true; // VAULT_KEKS reports its own problem
      }
    },
    { message: 'must name one of the ids in VAULT_KEKS', path: ['VAULT_ACTIVE_KEK'] },
  );

export const tokensConfigSchema = baseConfigSchema
  .extend({
    HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(3003),
    /** HMAC key (32 bytes, base64) of card fingerprints; changing it forgets which cards are the same. */
    VAULT_FINGERPRINT_KEY: base64Key,
    /**
     * A token whose card verification (3DS) has not succeeded this long after the card was stored,
     * or a re-tokenization's card staged this long ago and still waiting, is forgotten: the token
     * deleted (a read then answers 404) or the staged card dropped (ForgetUnverifiedCards), once
     * payments confirms no verification of it succeeded. Must be longer than a verification can
     * still end in success: payments' THREE_DS_TIMEOUT_MS (15 min) and the sweep that expires
     * abandoned sessions, with room for clocks and outages.
     */
    UNVERIFIED_CARD_GRACE_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .default(24 * 60 * 60_000),
    /** How often each replica looks for such cards (replicas sweeping at once forget each once). */
    UNVERIFIED_CARD_SWEEP_MS: z.coerce
      .number()
      .int()
      .min(50)
      .default(10 * 60_000),
  })
  .and(vaultKeysSchema);

export type TokensConfig = z.infer<typeof tokensConfigSchema>;
export const TOKENS_CONFIG = Symbol('TOKENS_CONFIG');

/** Set in production, never defaulted (runHttpService refuses to start without them): its RPC identity (card data moves only between signed services). */
export const REQUIRED_IN_PRODUCTION = ['RPC_SIGNING_KEY', 'RPC_TRUSTED_CALLERS'] as const;
