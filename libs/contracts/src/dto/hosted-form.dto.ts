import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional, IsString, MaxLength } from 'class-validator';
import { IsCssColor, IsGuid, IsHttpUrl, IsOneOf, NestedObject, ToBoolean } from '../decorators.js';
import { HOSTED_FORM_LOCALES, type HostedFormLocale, PAYMENT_METHODS, type PaymentMethod } from '../enums.js';
import {
  normalizeHostedFormLocale,
  type HostedFormConfigsInput,
  type HostedFormThemeColors,
} from '../hosted-form-configs.js';

// The decorator-free part (defaults, locale spellings, theme resolution, base64 encoding) lives in
// hosted-form-configs.ts so the page can import it without class-validator; re-exported here.
export * from '../hosted-form-configs.js';

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
export class HostedFormConfigs implements HostedFormConfigsInput {
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
  @NestedObject(() => HostedFormTheme)
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
