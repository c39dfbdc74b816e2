import { validateDto } from '../validate.js';
import {
  buildCheckoutUrl,
  decodeHostedFormConfigs,
  DEFAULT_HOSTED_FORM_THEME,
  encodeHostedFormConfigs,
  HostedFormConfigs,
  normalizeHostedFormLocale,
  resolveHostedFormConfigs,
} from './hosted-form.dto.js';

const orderId = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const checkoutKey = 'b2c3d4e5-f6a7-4b8c-9d0e-1f2a3b4c5d6e';
const base = { redirectUrl: 'https://shop.example.com/done', orderId, checkoutKey };

describe('HostedFormConfigs', () => {
  it('applies the documented defaults', () => {
    const result = validateDto(HostedFormConfigs, base);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(resolveHostedFormConfigs(result.value)).toEqual({
      ...base,
      locale: 'en_US',
      theme: DEFAULT_HOSTED_FORM_THEME,
      autoRedirect: true,
      showCancelButton: false,
      defaultPaymentMethod: null,
      skipATMSuccessPage: false,
      compact: false,
    });
  });

  it('merges a partial theme over the default one', () => {
    const result = validateDto(HostedFormConfigs, {
      ...base,
      theme: { primaryColor: '#ff0000' },
      compact: 'true',
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const resolved = resolveHostedFormConfigs(result.value);
    expect(resolved.theme).toEqual({ ...DEFAULT_HOSTED_FORM_THEME, primaryColor: '#ff0000' });
    expect(resolved.compact).toBe(true);
  });

  it('rejects colours that could inject CSS', () => {
    const result = validateDto(HostedFormConfigs, {
      ...base,
      theme: { textColor: 'red; background: url(https://evil)', backgroundColor: 'rgb(10, 20, 30)' },
    });
    expect(result.ok ? [] : result.errors.map((error) => error.field)).toEqual(['theme.textColor']);
  });

  it('normalises locale spellings and rejects unsupported ones', () => {
    expect(normalizeHostedFormLocale('EN')).toBe('en_US');
    expect(normalizeHostedFormLocale('pt-BR')).toBe('pt_BR');
    expect(normalizeHostedFormLocale('fr_fr')).toBe('fr_FR');
    expect(normalizeHostedFormLocale('de')).toBeUndefined();
    expect(validateDto(HostedFormConfigs, { ...base, locale: 'pt' })).toMatchObject({
      value: { locale: 'pt_PT' },
    });
    expect(validateDto(HostedFormConfigs, { ...base, locale: 'de_DE' }).ok).toBe(false);
  });

  it('requires the redirect address, order id and checkout key', () => {
    const result = validateDto(HostedFormConfigs, { defaultPaymentMethod: 'card' });
    expect(result.ok ? [] : result.errors.map((error) => error.field)).toEqual([
      'redirectUrl',
      'orderId',
      'checkoutKey',
    ]);
  });
});

describe('configs encoding and checkout URL', () => {
  it('round-trips non-ASCII JSON through base64, URL-safe variant included', () => {
    const configs = { ...base, locale: 'pt_PT', note: 'Pagamento de açúcar €' };
    const encoded = encodeHostedFormConfigs(configs);
    expect(decodeHostedFormConfigs(encoded)).toEqual(configs);
    const urlSafe = encoded.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    expect(decodeHostedFormConfigs(urlSafe)).toEqual(configs);
    expect(() => decodeHostedFormConfigs('%%%')).toThrow(SyntaxError);
  });

  it('reads a + that the link did not URL-encode, which the query string turned into a space', () => {
    // The WooCommerce plugin's links (replayed in issue 14) carry the base64 without URL-encoding it.
    const configs = { ...base, note: '~~~~~~' }; // its base64 holds a '+'
    const encoded = encodeHostedFormConfigs(configs);
    expect(encoded).toMatch(/\+/);
    const query = new URLSearchParams(`orderId=${orderId}&configs=${encoded}`);
    expect(query.get('configs')).toContain(' ');
    expect(decodeHostedFormConfigs(query.get('configs') ?? '')).toEqual(configs);
  });

  it('builds the hash-routed hosted form address', () => {
    const url = buildCheckoutUrl('https://checkout.example.com/', { checkoutKey, orderId });
    expect(url).toBe(`https://checkout.example.com/#/payment?checkoutKey=${checkoutKey}&orderId=${orderId}`);
    const withConfigs = new URL(
      buildCheckoutUrl('https://checkout.example.com', { checkoutKey, orderId, configs: base }),
    );
    const query = new URLSearchParams(withConfigs.hash.slice(withConfigs.hash.indexOf('?')));
    expect(decodeHostedFormConfigs(query.get('configs') ?? '')).toEqual(base);
  });
});
