import { Transform, Type } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { IsCssColor, IsGuid, IsHttpUrl, IsOneOf, ToBoolean } from '../decorators.js';
import { HOSTED_FORM_LOCALES, HostedFormLocale, PAYMENT_METHODS, type PaymentMethod } from '../enums.js';

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

/** `configs.theme`: any subset of the five colours. */
export class HostedFormTheme implements Partial<HostedFormThemeColors> {
  /** Page background. */
  @IsOptional()
  @IsCssColor()
  backgroundColor?: string;

  /** Form container background. */
  @IsOptional()
  @IsCssColor()
  formBackgroundColor?: string;

  /** Action buttons. */
  @IsOptional()
  @IsCssColor()
  primaryColor?: string;

  /** Text. */
  @IsOptional()
  @IsCssColor()
  textColor?: string;

  /** Hover/focus effects background. */
  @IsOptional()
  @IsCssColor()
  effectsBackgroundColor?: string;
}

/** The hosted form `configs` object (sent base64-encoded JSON in the `configs` query parameter). */
export class HostedFormConfigs {
  /** Where the shopper goes after paying (success or failure). */
  @IsHttpUrl()
  redirectUrl: string;

  /** Order to render. */
  @IsGuid()
  orderId: string;

  /** Checkout key of that order. */
  @IsGuid()
  checkoutKey: string;

  /** Language, e.g. en_US; default en_US. */
  @IsOptional()
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? (normalizeHostedFormLocale(value) ?? value) : value,
  )
  @IsOneOf(HOSTED_FORM_LOCALES)
  locale?: HostedFormLocale;

  /** Colours; unset ones use the default theme. */
  @IsOptional()
  @ValidateNested()
  @Type(() => HostedFormTheme)
  theme?: HostedFormTheme;

  /** Redirect to `redirectUrl` automatically after paying; default true. */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  autoRedirect?: boolean;

  /** Show a cancel button that cancels the order; default false. */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  showCancelButton?: boolean;

  /** Method to open directly, when available. */
  @IsOptional()
  @IsOneOf(PAYMENT_METHODS)
  defaultPaymentMethod?: PaymentMethod;

  /** Skip the ATM reference page and redirect; default false. */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
  skipATMSuccessPage?: boolean;

  /** No body background, margins, paddings or shadow; default false. */
  @IsOptional()
  @ToBoolean()
  @IsBoolean()
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
export function resolveHostedFormConfigs(configs: HostedFormConfigs): ResolvedHostedFormConfigs {
  const theme = { ...DEFAULT_HOSTED_FORM_THEME };
  for (const key of Object.keys(theme) as (keyof HostedFormThemeColors)[]) {
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

/** Query of the hosted form page `{checkout_url}/#/payment?checkoutKey=&orderId=&configs=`. */
export class HostedFormQuery {
  /** From the order response. */
  @IsGuid()
  checkoutKey: string;

  /** Order to pay. */
  @IsGuid()
  orderId: string;

  /** Base64 of the `configs` JSON. */
  @IsOptional()
  @IsString()
  @MaxLength(8192)
  configs?: string;
}

/** Base64 (of UTF-8 JSON) for the `configs` query parameter. */
export function encodeHostedFormConfigs(configs: object): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(JSON.stringify(configs))) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * Decodes the `configs` query parameter (standard or URL-safe base64 of UTF-8 JSON) into
 * the plain object to validate as {@link HostedFormConfigs}.
 * @throws SyntaxError when it is not base64 of JSON.
 */
export function decodeHostedFormConfigs(encoded: string): unknown {
  const base64 = encoded.trim().replace(/-/g, '+').replace(/_/g, '/');
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
