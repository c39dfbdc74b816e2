import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '@byrd/platform';
import { WEBHOOK_ENTITIES, WEBHOOK_MIGRATIONS } from '../src/database.js';
import { ResealSecrets } from '../src/secrets/reseal-secrets.usecase.js';
import { SettingsSecrets, type SettingsSecretValues } from '../src/secrets/settings-secrets.js';
import { WebhookHarness } from './harness.js';
import { Receiver } from './receiver.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '../dist/webhooks-cli.js');
const LOCAL_CLI = path.resolve(here, '../../../deploy/local/cli.mjs');

const newKey = () => randomBytes(32).toString('base64');
const secretsOf = (keys: string) => new SettingsSecrets({ WEBHOOK_SECRETS_KEYS: keys });

type SecretColumns = { id: string; api_key: string | null; password: string | null; signing_secret: string };
const valuesOf = (row: SecretColumns): SettingsSecretValues => ({
  id: row.id,
  apiKey: row.api_key,
  password: row.password,
  signingSecret: row.signing_secret,
});

/** A setting's secrets in clear: a new API key or password, and a new signing secret. */
function freshSecrets(id: string, basic: boolean): SettingsSecretValues {
  return {
    id,
    apiKey: basic ? null : randomUUID(),
    password: basic ? randomBytes(12).toString('base64url') : null,
    signingSecret: `whsec_${randomBytes(32).toString('base64')}`,
  };
}

/** `node <script> <args>` as an operator runs it; `killAtFirstBatch` SIGKILLs it once it printed one. */
function runCommand(
  script: string,
  args: string[],
  env: Record<string, string>,
  killAtFirstBatch = false,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (killAtFirstBatch && stdout.includes('re-sealed ')) child.kill('SIGKILL');
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('webhooks reseal-secrets', () => {
  const keyA = newKey();
  const keyB = newKey();
  let h: WebhookHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    // The race below subscribes 120 settings of one merchant, past the default cap of 100.
    h = await WebhookHarness.start({ WEBHOOK_SECRETS_KEYS: keyA, WEBHOOK_SETTINGS_MAX_PER_MERCHANT: '200' });
    receiver = await Receiver.start();
  });
  afterAll(async () => {
    await receiver?.stop();
    await h?.stop();
  });

  const secretRows = () =>
    h.rows<SecretColumns>(`SELECT id, api_key, password, signing_secret FROM webhook_settings ORDER BY id`);

  /** Settings of another merchant (no event of this run reaches them), stored sealed by `secrets`. */
  async function insertSettings(secrets: SettingsSecrets, clear: SettingsSecretValues[]): Promise<void> {
    const sealed = clear.map((values) => secrets.sealRow(values));
    await h.rows(
      `INSERT INTO webhook_settings (id, merchant_id, merchant_mode, url, credential_type, api_key, username,
         password, signing_secret, events, payment_methods, retry_on_4xx, created_at)
       SELECT n.id, 'another-merchant', 'sandbox', 'https://hooks.example.com/', n.type, n.api_key,
         CASE WHEN n.type = 'basic' THEN 'shop' END, n.password, n.signing_secret, '{}', '{}', true, now()
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[])
         AS n (id, type, api_key, password, signing_secret)`,
      [
        sealed.map((s) => s.id),
        sealed.map((s) => (s.apiKey === null ? 'basic' : 'api-key')),
        sealed.map((s) => s.apiKey),
        sealed.map((s) => s.password),
        sealed.map((s) => s.signingSecret),
      ],
    );
  }

  it('re-seals under the new first key while the service serves, killed and rerun: then the old key can go', async () => {
    // Settings the merchant made while A was the only key, one deleted after its delivery.
    const byKey = await h.subscribe({ url: `${receiver.url}?key` });
    const byBasic = await h.subscribe({ url: `${receiver.url}?basic`, credentialType: 'basic' });
    const gone = await h.subscribe({ url: `${receiver.url}?gone` });
    const before = await h.publish('order.paid');
    await receiver.waitFor((r) => r.length === 3);
    const goneWebhook = (await h.webhooksOf(before.id)).find((w) => w.settings_id === gone.id);
    expect((await h.request('DELETE', `/api/v1/settings/${gone.id}`)).status).toBe(200);
    // Enough more for the command to be killed between two batches.
    const bulk = Array.from({ length: 400 }, (_, i) => freshSecrets(randomUUID(), i % 2 === 0));
    await insertSettings(secretsOf(keyA), bulk);
    const total = bulk.length + 3;

    // Step 2 of the rotation: B first on every replica, A still opens.
    await h.restart({ WEBHOOK_SECRETS_KEYS: `${keyB},${keyA}` });
    const env = { DATABASE_URL: h.config.DATABASE_URL, WEBHOOK_SECRETS_KEYS: `${keyB},${keyA}` };
    const rotated = secretsOf(`${keyB},${keyA}`);
    const underA = async () =>
      (await secretRows()).filter((row) => rotated.needsResealing(valuesOf(row))).length;
    expect(await underA()).toBe(total);

    const killed = await runCommand(CLI, ['reseal-secrets', '--batch-size', '5'], env, true);
    expect(killed.stdout).toMatch(/^re-sealed 5$/m);
    const left = await underA();
    expect(left).toBeLessThanOrEqual(total - 5);

    // Run again (as `npm run cli -- webhooks reseal-secrets`), while a delivery goes out.
    const during = await h.publish('order.paid');
    const rerun = await runCommand(LOCAL_CLI, ['webhooks', 'reseal-secrets', '--batch-size', '5'], env);
    expect(rerun).toMatchObject({ code: 0, stderr: '' });
    expect(rerun.stdout).toContain(`Re-sealed ${left} settings.`);
    expect(rerun.stdout).toContain(
      'Every setting is sealed with the first key of WEBHOOK_SECRETS_KEYS: the other keys can be removed.',
    );
    expect(await underA()).toBe(0);
    await h.waitForRow(
      `SELECT status FROM webhooks WHERE event_id = $1`,
      [during.id],
      (rows) => rows.length === 2 && rows.every((w) => w.status === 'succeeded'),
    );

    // Step 3: A removed. Everything the merchant had still reads, delivers and verifies.
    await h.restart({ WEBHOOK_SECRETS_KEYS: keyB });
    const listed = await h.request('GET', '/api/v1/settings');
    expect(listed.status).toBe(200);
    expect(Object.fromEntries(listed.body.data.map((s: any) => [s.id, s.credential]))).toEqual({
      [byKey.id]: byKey.credential,
      [byBasic.id]: byBasic.credential,
    });
    expect((await h.request('GET', `/api/v1/settings/${byBasic.id}`)).body.data.credential).toEqual(
      byBasic.credential,
    );
    const attempts = await h.request('GET', `/api/v1/webhooks/${goneWebhook.id}/attempts`);
    expect(attempts.status).toBe(200);
    expect(attempts.body.data[0].settings.credential).toEqual(gone.credential);

    const after = await h.publish('order.paid');
    const sent = await h.waitForRow(
      `SELECT id, settings_id, status FROM webhooks WHERE event_id = $1`,
      [after.id],
      (rows) => rows.length === 2 && rows.every((w) => w.status === 'succeeded'),
    );
    const to = (settings: { id: string }) =>
      receiver.of(sent.find((w) => w.settings_id === settings.id).id)[0];
    expect(to(byKey).headers['x-api-key']).toBe(byKey.credential.apiKey);
    const { username, password } = byBasic.credential;
    expect(to(byBasic).headers.authorization).toBe(
      `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`,
    );
    for (const settings of [byKey, byBasic]) {
      const request = to(settings);
      expect(new Webhook(settings.signingSecret).verify(request.body, request.headers as never)).toEqual(
        request.json,
      );
    }
    // And the settings no event reached open under B alone to what they were.
    const onlyB = secretsOf(keyB);
    const opened = new Map((await secretRows()).map((row) => [row.id, onlyB.openRow(valuesOf(row))]));
    for (const values of bulk) expect(opened.get(values.id)).toEqual(values);
  });

  it('names a setting no key opens, re-seals the others and exits 1', async () => {
    const keyC = newKey();
    const others = Array.from({ length: 6 }, () => freshSecrets(randomUUID(), false));
    const lost = freshSecrets(randomUUID(), true);
    await insertSettings(secretsOf(keyA), others);
    await insertSettings(secretsOf(keyC), [lost]);

    const run = await runCommand(CLI, ['reseal-secrets', '--batch-size', '4'], {
      DATABASE_URL: h.config.DATABASE_URL,
      WEBHOOK_SECRETS_KEYS: `${keyB},${keyA}`,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`settings ${lost.id}: Cannot open a secret sealed with key`);
    expect(run.stderr).toContain('1 settings (above) open with no key of WEBHOOK_SECRETS_KEYS');
    expect(run.stdout).toContain('Re-sealed 6 settings.');
    expect(run.stdout).not.toContain('can be removed');
    const onlyB = secretsOf(keyB);
    const rows = new Map((await secretRows()).map((row) => [row.id, valuesOf(row)]));
    for (const values of others) expect(onlyB.openRow(rows.get(values.id)!)).toEqual(values);
    expect(secretsOf(keyC).openRow(rows.get(lost.id)!)).toEqual(lost);
    await h.rows(`DELETE FROM webhook_settings WHERE id = $1`, [lost.id]);
  });

  it('loses no concurrent change of a setting: two runs at once while settings are rewritten and deleted, round after round', async () => {
    const ROUNDS = 40;
    const SETTINGS = 120;
    const WRITERS = 3;
    await h.freshMerchant();
    const ids: string[] = [];
    for (let i = 0; i < SETTINGS; i += 20) {
      const made = await Promise.all(
        Array.from({ length: 20 }, () =>
          h.subscribe({ url: `${receiver.url}?race`, credentialType: 'basic' }),
        ),
      );
      ids.push(...made.map((s) => s.id));
    }
    const rotated = secretsOf(`${keyB},${keyA}`);
    const onlyB = secretsOf(keyB);
    const oldOnly = secretsOf(keyA);
    const sources = [0, 1].map(
      () =>
        new DataSource(
          dataSourceOptions({
            url: h.config.DATABASE_URL,
            entities: WEBHOOK_ENTITIES,
            migrations: WEBHOOK_MIGRATIONS,
          }),
        ),
    );
    await Promise.all(sources.map((s) => s.initialize()));
    const pool = new pg.Pool({ connectionString: h.config.DATABASE_URL, max: WRITERS + 1 });
    const write = (values: SettingsSecretValues) =>
      pool.query(
        `UPDATE webhook_settings SET api_key = $2, password = $3, signing_secret = $4 WHERE id = $1`,
        [values.id, values.apiKey, values.password, values.signingSecret],
      );
    const expected = new Map<string, SettingsSecretValues>();
    const deleted = new Set<string>();
    let writesDuringRuns = 0;
    try {
      for (let round = 0; round < ROUNDS; round++) {
        // Every setting back under A alone, with new values: what a rotation starts from.
        for (const id of ids) expected.set(id, freshSecrets(id, true));
        const reset = [...expected.values()].map((values) => oldOnly.sealRow(values));
        // In one statement: this is the set-up of a round, not its race (the writers below race one by one).
        await pool.query(
          `UPDATE webhook_settings s SET api_key = n.api_key, password = n.password,
             signing_secret = n.signing_secret
           FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS n (id, api_key, password, signing_secret)
           WHERE s.id = n.id`,
          [
            reset.map((r) => r.id),
            reset.map((r) => r.apiKey),
            reset.map((r) => r.password),
            reset.map((r) => r.signingSecret),
          ],
        );

        let running = true;
        // Each writer owns its own settings, so the value it last wrote is the one expected.
        const writers = Array.from({ length: WRITERS }, async (_, w) => {
          const mine = ids.filter((_, i) => i % WRITERS === w);
          while (running) {
            const values = freshSecrets(mine[Math.floor(Math.random() * mine.length)], true);
            await write(rotated.sealRow(values));
            expected.set(values.id, values);
            writesDuringRuns++;
          }
        });
        const deleting = (async () => {
          const id = ids.find((i) => !deleted.has(i))!;
          expect((await h.request('DELETE', `/api/v1/settings/${id}`)).status).toBe(200);
          deleted.add(id);
        })();
        const results = await Promise.all(
          // A shorter pause between passes than the command's 100 ms: 40 rounds need not sit it out.
          sources.map((source) =>
            new ResealSecrets(source, rotated).execute({ batchSize: 8, passPauseMs: 20 }),
          ),
        );
        running = false;
        await Promise.all([...writers, deleting]);

        for (const result of results) expect(result).toMatchObject({ unopenable: [], stillOld: 0 });
        const rows = await h.rows<SecretColumns & { deleted: boolean }>(
          `SELECT id, api_key, password, signing_secret, deleted_at IS NOT NULL AS deleted
           FROM webhook_settings WHERE id = ANY ($1::uuid[])`,
          [ids],
        );
        expect(rows).toHaveLength(SETTINGS);
        for (const row of rows) {
          expect({ round, ...onlyB.openRow(valuesOf(row)) }).toEqual({ round, ...expected.get(row.id) });
          expect({ round, id: row.id, deleted: row.deleted }).toEqual({
            round,
            id: row.id,
            deleted: deleted.has(row.id),
          });
        }
      }
    } finally {
      await pool.end();
      await Promise.all(sources.map((s) => s.destroy()));
    }
    // The writers did race the runs (a round without a write proves nothing).
    expect(writesDuringRuns).toBeGreaterThan(ROUNDS * WRITERS);
  });
});
