// The page address `{checkout_url}/#/payment?checkoutKey=&orderId=&configs=` and its `configs`
// (base64 JSON), checked here in the browser: the page is the only reader of the fragment.
import {
  decodeHostedFormConfigs,
  HOSTED_FORM_DEFAULTS,
  HOSTED_FORM_LOCALES,
  HOSTED_FORM_THEME_COLORS,
  type HostedFormConfigsInput,
  type HostedFormLocale,
  type HostedFormThemeColors,
  isGuid,
  normalizeHostedFormLocale,
  type PaymentMethod,
  type ResolvedHostedFormConfigs,
  resolveHostedFormConfigs,
} from '@byrd/contracts/browser';

/** What the link asks for, before the order is known (redirectUrl may still come from the order). */
export interface CheckoutLink {
  orderId: string;
  checkoutKey: string;
  /** `configs` with the defaults applied; `redirectUrl` is '' when configs gave none. */
  configs: ResolvedHostedFormConfigs;
}

/** A link the page cannot use; `detail` (English) helps the merchant's developer, the shopper sees a plain page. */
export interface LinkProblem {
  locale: HostedFormLocale;
  detail: string;
}

export type LinkResult = { ok: true; link: CheckoutLink } | { ok: false; problem: LinkProblem };

const MAX_URL_LENGTH = 2048;

/** Reads `location.hash` (`#/payment?...`). */
export function readCheckoutLink(hash: string): LinkResult {
  const [route = '', search = ''] = hash.replace(/^#/, '').split('?', 2);
  const query = new URLSearchParams(search);
  const warnings: string[] = [];
  let raw: Record<string, unknown> | null = null;
  let configsProblem: string | null = null;
  const encoded = query.get('configs');
  if (encoded) {
    try {
      const decoded = decodeHostedFormConfigs(encoded);
      if (typeof decoded === 'object' && decoded !== null && !Array.isArray(decoded)) {
        raw = decoded as Record<string, unknown>;
      } else {
        configsProblem = 'configs must be the base64 of a JSON object';
      }
    } catch (error) {
      configsProblem = `configs is not base64 of JSON (${(error as Error).message})`;
    }
  }
  const locale = readLocale(raw?.locale, warnings);
  const fail = (detail: string): LinkResult => ({ ok: false, problem: { locale, detail } });

  if (route.replace(/\/+$/, '') !== '/payment')
    return fail(`unknown page "${route || '/'}"; use #/payment?...`);
  const orderId = query.get('orderId')?.trim().toLowerCase() ?? '';
  const checkoutKey = query.get('checkoutKey')?.trim().toLowerCase() ?? '';
  if (!isGuid(orderId)) return fail('the orderId query parameter is missing or not a GUID');
  if (!isGuid(checkoutKey)) return fail('the checkoutKey query parameter is missing or not a GUID');
  if (configsProblem) return fail(configsProblem);

  const input: HostedFormConfigsInput = { redirectUrl: '', orderId, checkoutKey, locale };
  if (raw) {
    const configOrderId = typeof raw.orderId === 'string' ? raw.orderId.trim().toLowerCase() : null;
    const configKey = typeof raw.checkoutKey === 'string' ? raw.checkoutKey.trim().toLowerCase() : null;
    if (configOrderId === null) return fail('configs.orderId is required');
    if (configKey === null) return fail('configs.checkoutKey is required');
    if (configOrderId !== orderId) return fail('configs.orderId does not match the orderId query parameter');
    if (configKey !== checkoutKey)
      return fail('configs.checkoutKey does not match the checkoutKey query parameter');
    if (raw.redirectUrl !== undefined) {
      if (!isHttpUrl(raw.redirectUrl)) return fail('configs.redirectUrl must be an absolute http(s) URL');
      input.redirectUrl = raw.redirectUrl;
    }
    input.theme = readTheme(raw.theme, warnings);
    input.autoRedirect = readBoolean(raw, 'autoRedirect', warnings);
    input.showCancelButton = readBoolean(raw, 'showCancelButton', warnings);
    input.skipATMSuccessPage = readBoolean(raw, 'skipATMSuccessPage', warnings);
    input.compact = readBoolean(raw, 'compact', warnings);
    if (typeof raw.defaultPaymentMethod === 'string') {
      input.defaultPaymentMethod = raw.defaultPaymentMethod.trim().toLowerCase() as PaymentMethod;
    } else if (raw.defaultPaymentMethod != null) {
      warnings.push('configs.defaultPaymentMethod must be a string; ignored');
    }
  }
  for (const warning of warnings) console.warn(`[checkout] ${warning}`);
  return { ok: true, link: { orderId, checkoutKey, configs: resolveHostedFormConfigs(input) } };
}

/** True for an absolute http(s) URL the shopper can be sent to. */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}

/** Unknown or missing locales fall back to English (SPEC: default en_US). */
function readLocale(value: unknown, warnings: string[]): HostedFormLocale {
  if (value == null) return HOSTED_FORM_DEFAULTS.locale;
  const locale = typeof value === 'string' ? normalizeHostedFormLocale(value) : undefined;
  if (locale) return locale;
  warnings.push(
    `configs.locale ${JSON.stringify(value)} is not one of ${HOSTED_FORM_LOCALES.join(', ')}; using en_US`,
  );
  return HOSTED_FORM_DEFAULTS.locale;
}

/** Each valid colour is kept; an invalid one falls back to the default theme's (and is reported). */
function readTheme(value: unknown, warnings: string[]): Partial<HostedFormThemeColors> | undefined {
  if (value == null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    warnings.push('configs.theme must be an object; using the default theme');
    return undefined;
  }
  const theme: Partial<HostedFormThemeColors> = {};
  const colors = value as Record<string, unknown>;
  for (const key of HOSTED_FORM_THEME_COLORS) {
    const color = colors[key];
    if (color == null) continue;
    if (typeof color === 'string' && CSS.supports('color', color.trim())) theme[key] = color.trim();
    else warnings.push(`configs.theme.${key} is not a CSS colour; using the default`);
  }
  return theme;
}

/** Booleans as the DTO takes them: true/false or "true"/"false"; anything else keeps the default. */
function readBoolean(raw: Record<string, unknown>, key: string, warnings: string[]): boolean | undefined {
  const value = raw[key];
  if (value == null) return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  warnings.push(`configs.${key} must be true or false; using the default`);
  return undefined;
}
