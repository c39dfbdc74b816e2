import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type {
  CheckoutOrderView,
  CheckoutPaymentView,
  HostedFormLocale,
  ResolvedHostedFormConfigs,
} from '@byrd/contracts/browser';
import type { CheckoutApi } from './api.js';
import type { Messages } from './i18n.js';

/** Everything a screen of a payable order needs. */
export interface Checkout {
  order: CheckoutOrderView;
  /** `configs` with defaults; `redirectUrl` is the configs' or else the order's. */
  configs: ResolvedHostedFormConfigs;
  api: CheckoutApi;
  t: Messages;
  locale: HostedFormLocale;
  /** The order's amount, formatted for the locale. */
  amount: string;
  /** Sends the shopper back to the merchant with the outcome. */
  leave: (status: string, payment?: CheckoutPaymentView) => void;
  /**
   * Reads the order again and, when it was paid, canceled or expired meanwhile or another attempt
   * holds it, replaces the form with the closed-order page (resolves true then). Given a `failure`,
   * only after one that may mean the order moved on (see `mayHaveMovedOn`). `lockIsOurs`: after this
   * page's own attempt ended, whose lock may not be released yet, a held order stays open.
   */
  recheckOrder: (failure?: unknown, lockIsOurs?: boolean) => Promise<boolean>;
}

export const CheckoutContext = createContext<Checkout | null>(null);

export function useCheckout(): Checkout {
  const checkout = useContext(CheckoutContext);
  if (!checkout) throw new Error('useCheckout outside a CheckoutContext');
  return checkout;
}

/** True once the shopper moved between screens: new screens then take the focus (not on page load). */
export const FocusOnMount = createContext(false);
