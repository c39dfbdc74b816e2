import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { validateDto } from '../validate.js';
import { CreateWebhookSettingsRequest, ResendWebhooksRequest } from './webhooks.dto.js';

const id1 = '0b5e2b1c-8d9a-4f3e-9c21-7a6b5c4d3e2f';
const id2 = '1c6f3c2d-9eab-4a4f-8d32-8b7c6d5e4f30';

const fieldsOf = <T extends object>(cls: new () => T, plain: unknown): string[] => {
  const result = validateDto(cls, plain);
  return result.ok ? [] : result.errors.map((error) => error.field);
};

describe('ResendWebhooksRequest', () => {
  it('reads ids and url', () => {
    const result = validateDto(ResendWebhooksRequest, {
      ids: [id1, id2],
      url: 'https://other.example.com/hook',
    });
    expect(result).toMatchObject({
      ok: true,
      value: { ids: [id1, id2], url: 'https://other.example.com/hook' },
    });
  });

  it('reads the PascalCase Ids and Url too, without keeping the aliases', () => {
    const result = validateDto(ResendWebhooksRequest, {
      Ids: [id1.toUpperCase()],
      Url: 'https://x.example.com',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.value.ids).toEqual([id1]);
    expect(result.value.url).toBe('https://x.example.com');
    expect(Object.keys(result.value).sort()).toEqual(['ids', 'url']);
  });

  it('passes a pipe that forbids unknown properties when aliases are used', () => {
    const instance = plainToInstance(ResendWebhooksRequest, { Ids: [id1] });
    expect(instance).not.toHaveProperty('Ids');
    expect(instance.ids).toEqual([id1]);
    expect(validateSync(instance, { whitelist: true, forbidNonWhitelisted: true })).toEqual([]);
  });

  it('requires a non-empty list of GUIDs', () => {
    expect(fieldsOf(ResendWebhooksRequest, {})).toEqual(['ids']);
    expect(fieldsOf(ResendWebhooksRequest, { ids: [] })).toEqual(['ids']);
    expect(fieldsOf(ResendWebhooksRequest, { ids: [id1, 'nope'] })).toEqual(['ids']);
  });
});

describe('CreateWebhookSettingsRequest', () => {
  const settings = { url: 'https://merchant.example.com/webhooks', credentialType: 'api-key' };

  it('accepts settings with event and payment-method filters', () => {
    expect(
      fieldsOf(CreateWebhookSettingsRequest, {
        ...settings,
        events: ['order.paid', 'transaction.refund.success', 'chargeback.pendingaction'],
        paymentMethods: ['card'],
      }),
    ).toEqual([]);
  });

  it('rejects unknown events, payment methods and credential types', () => {
    expect(
      fieldsOf(CreateWebhookSettingsRequest, {
        ...settings,
        credentialType: 'oauth',
        events: ['order.shipped'],
        paymentMethods: ['cash'],
      }),
    ).toEqual(['credentialType', 'events', 'paymentMethods']);
  });

  it('keeps credentials to their credential type and basic credentials in pairs', () => {
    expect(fieldsOf(CreateWebhookSettingsRequest, { ...settings, apiKey: 'a-long-secret-key' })).toEqual([]);
    expect(
      fieldsOf(CreateWebhookSettingsRequest, { ...settings, username: 'u', password: 'password1' }),
    ).toEqual(['username', 'password']);
    expect(
      fieldsOf(CreateWebhookSettingsRequest, { ...settings, credentialType: 'basic', username: 'shop' }),
    ).toEqual(['password']);
    expect(
      fieldsOf(CreateWebhookSettingsRequest, {
        ...settings,
        credentialType: 'basic',
        username: 'shop',
        password: 'password1',
      }),
    ).toEqual([]);
  });

  it('takes only credentials a delivery can send: an API key of printable ASCII, a username with no colon', () => {
    for (const apiKey of ['key-1234\r\nX: 1', 'key\u0000-12345', 'clé-secrète', 'key-\u2603-1234', ' key-12345'])
      expect(fieldsOf(CreateWebhookSettingsRequest, { ...settings, apiKey })).toEqual(['apiKey']);
    expect(fieldsOf(CreateWebhookSettingsRequest, { ...settings, apiKey: 'a key_with!~punctuation' })).toEqual([]);
    const basic = { ...settings, credentialType: 'basic', password: 'pässwörd:1' };
    expect(fieldsOf(CreateWebhookSettingsRequest, { ...basic, username: 'shop:1' })).toEqual(['username']);
    expect(fieldsOf(CreateWebhookSettingsRequest, { ...basic, username: 'Jörg Shop' })).toEqual([]);
  });
});
