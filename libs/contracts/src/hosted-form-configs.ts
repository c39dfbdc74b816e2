// The hosted form's `configs` without decorators: defaults, locale spellings, theme resolution and
// the base64 encoding. The page in the shopper's browser imports this file directly (class-validator
// stays out of its bundle); the validated DTO classes live in dto/hosted-form.dto.ts, which
// re-exports everything here.
import { HOSTED_FORM_LOCALES, HostedFormLocale, type PaymentMethod } from './enums.js';

/** Theme colours of the hosted form; unset ones use {@link DEFAULT_HOSTED_FORM_THEME}. */
export interface HostedFormThemeColors {
  /** Page background. */
  backgroundColor: string;
  /** Form container background. */
  formBackgroundColor: string;
  /** Action buttons. */
  primaryColor: string;
  /** Text. */
  textColor: string;
  /** Hover/focus effects background. */
  effectsBackgroundColor: string;
}

/** The names of the five theme colours, in documentation order. */
export const HOSTED_FORM_THEME_COLORS: readonly (keyof HostedFormThemeColors)[] = Object.freeze([
  'backgroundColor',
  'formBackgroundColor',
  'primaryColor',
  'textColor',
  'effectsBackgroundColor',
]);

/** The service's default theme (decision: the public record does not publish its colours). */
export const DEFAULT_HOSTED_FORM_THEME: Readonly<HostedFormThemeColors> = Object.freeze({
  backgroundColor: '#f5f6f8',
  formBackgroundColor: '#ffffff',
  primaryColor: '#1f6feb',
  textColor: '#1b1f24',
  effectsBackgroundColor: '#e8ecf2',
});

/** Defaults of the optional `configs` fields. */
export const HOSTED_FORM_DEFAULTS = Object.freeze({
  locale: HostedFormLocale.EnUS,
  autoRedirect: true,
  showCancelButton: false,
  skipATMSuccessPage: false,
  compact: false,
} as const);

const LANGUAGE_DEFAULT_REGION: Record<string, HostedFormLocale> = {
  en: 'en_US',
  pt: 'pt_PT',
  es: 'es_ES',
  fr: 'fr_FR',
};

/**
 * Normalises the locale spellings clients use ("EN", "pt", "pt-BR", "en_us") to a form
 * locale; undefined when it is not one of the five.
 */
export function normalizeHostedFormLocale(value: string): HostedFormLocale | undefined {
  const [language = '', region] = value.trim().replace('-', '_').split('_');
  if (region === undefined) return LANGUAGE_DEFAULT_REGION[language.toLowerCase()];
  const candidate = `${language.toLowerCase()}_${region.toUpperCase()}`;
  return HOSTED_FORM_LOCALES.find((locale) => locale === candidate);
}

/** The BCP 47 tag of a form locale (`pt_BR` → `pt-BR`): `<html lang>` and `Intl`. */
export function hostedFormLanguageTag(locale: HostedFormLocale): string {
  return locale.replace('_', '-');
}

/** `configs` once validated: the shape {@link resolveHostedFormConfigs} needs. */
export interface HostedFormConfigsInput {
  redirectUrl: string;
  orderId: string;
  checkoutKey: string;
  locale?: HostedFormLocale;
  theme?: Partial<HostedFormThemeColors>;
  autoRedirect?: boolean;
  showCancelButton?: boolean;
  defaultPaymentMethod?: PaymentMethod;
  skipATMSuccessPage?: boolean;
  compact?: boolean;
}

/** `configs` with every default applied. */
export interface ResolvedHostedFormConfigs {
  redirectUrl: string;
  orderId: string;
  checkoutKey: string;
  locale: HostedFormLocale;
  theme: HostedFormThemeColors;
  autoRedirect: boolean;
  showCancelButton: boolean;
  defaultPaymentMethod: PaymentMethod | null;
  skipATMSuccessPage: boolean;
  compact: boolean;
}

/** Applies the defaults to validated `configs`; each unset theme colour takes its default. */
export function resolveHostedFormConfigs(configs: HostedFormConfigsInput): ResolvedHostedFormConfigs {
  const theme = { ...DEFAULT_HOSTED_FORM_THEME };
  for (const key of HOSTED_FORM_THEME_COLORS) {
    theme[key] = configs.theme?.[key] ?? theme[key];
  }
  return {
    redirectUrl: configs.redirectUrl,
    orderId: configs.orderId,
    checkoutKey: configs.checkoutKey,
    locale: configs.locale ?? HOSTED_FORM_DEFAULTS.locale,
    theme,
    autoRedirect: configs.autoRedirect ?? HOSTED_FORM_DEFAULTS.autoRedirect,
    showCancelButton: configs.showCancelButton ?? HOSTED_FORM_DEFAULTS.showCancelButton,
    defaultPaymentMethod: configs.defaultPaymentMethod ?? null,
    skipATMSuccessPage: configs.skipATMSuccessPage ?? HOSTED_FORM_DEFAULTS.skipATMSuccessPage,
    compact: configs.compact ?? HOSTED_FORM_DEFAULTS.compact,
  };
}

/** Base64 (of UTF-8 JSON) for the `configs` query parameter. */
export function encodeHostedFormConfigs(configs: object): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(JSON.stringify(configs))) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Decodes the `configs` query parameter (standard or URL-safe base64 of UTF-8 JSON) into
 * the plain object to validate as `HostedFormConfigs`. A space is a `+` the link did not
 * URL-encode (the WooCommerce plugin's links): a query string reads `+` as a space, and base64
 * has no spaces of its own.
 * @throws SyntaxError when it is not base64 of JSON.
 */
export function decodeHostedFormConfigs(encoded: string): unknown {
  const base64 = encoded.replace(/ /g, '+').trim().replace(/-/g, '+').replace(/_/g, '/');
  let binary: string;
  try {
    binary = atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '='));
  } catch {
    throw new SyntaxError('configs is not valid base64');
  }
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SyntaxError('configs is not UTF-8 text');
  }
  return JSON.parse(text) as unknown;
}

/**
 * Address of the hosted form for an order: `{checkoutUrl}/#/payment?checkoutKey=&orderId=`,
 * plus `configs` when given (the `checkoutUrl` of the order response).
 */
export function buildCheckoutUrl(
  checkoutBaseUrl: string,
  params: { checkoutKey: string; orderId: string; configs?: object },
): string {
  const query = new URLSearchParams({ checkoutKey: params.checkoutKey, orderId: params.orderId });
  if (params.configs) query.set('configs', encodeHostedFormConfigs(params.configs));
  return `${checkoutBaseUrl.replace(/\/+$/, '')}/#/payment?${query.toString()}`;
}
