import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import {
  type CheckoutOrderView,
  type CheckoutPaymentView,
  DEFAULT_HOSTED_FORM_THEME,
  hostedFormLanguageTag,
  type PaymentMethod,
  type ResolvedHostedFormConfigs,
  OPEN_ORDER_STATUSES,
} from '@byrd/contracts/browser';
import { announce } from './announce.js';
import { ApiError, createCheckoutApi, type CheckoutApi } from './api.js';
import { CardStep } from './components/card-step.js';
import { MethodMark } from './components/icons.js';
import { MbWayStep, MbWayWaiting } from './components/mbway.js';
import { MultibancoReference, MultibancoStep } from './components/multibanco.js';
import { ClosedOrder, Leaving, Outcome, Problem } from './components/pages.js';
import { Button, IconBack, IconChevron, ScreenTitle, Spinner } from './components/ui.js';
import { CheckoutContext, FocusOnMount, useCheckout, type Checkout } from './context.js';
import { follow, isBeingPaid, isPending, orderShowsPayment } from './follow.js';
import { formatAmount } from './format.js';
import { messagesFor, type Messages } from './i18n.js';
import { isHttpUrl, type CheckoutLink, type LinkResult } from './link.js';
import { isAllowedTarget, leaveTo, redirectTarget } from './navigate.js';
import { applyTheme } from './theme.js';
import { timing } from './timings.js';

/** Methods this page can take, in the order the BFF lists them. */
type FormMethod = 'card' | 'multibanco' | 'mbway';
const FORM_METHODS: readonly PaymentMethod[] = ['card', 'multibanco', 'mbway'];

type Loaded =
  | { kind: 'loading' }
  | { kind: 'problem'; title: string; text: string; detail?: string; retry?: boolean }
  | { kind: 'closed'; order: CheckoutOrderView; returnUrl: string | null; noMethod: boolean }
  | { kind: 'ready'; order: CheckoutOrderView; configs: ResolvedHostedFormConfigs };

/** The page of one link (`parsed` from the address's fragment). */
export function App({ parsed }: { parsed: LinkResult }) {
  const locale = parsed.ok ? parsed.link.configs.locale : parsed.problem.locale;
  const t = messagesFor(locale);
  const link = parsed.ok ? parsed.link : null;
  const api = useMemo(() => (link ? createCheckoutApi(link.orderId, link.checkoutKey) : null), [link]);
  const [attempt, setAttempt] = useState(0);
  const [loaded, setLoaded] = useState<Loaded>(
    parsed.ok
      ? { kind: 'loading' }
      : {
          kind: 'problem',
          title: t.invalidLinkTitle,
          text: t.invalidLinkText,
          detail: parsed.problem.detail,
        },
  );

  useLayoutEffect(() => {
    document.documentElement.lang = hostedFormLanguageTag(locale);
    applyTheme(link?.configs.theme ?? DEFAULT_HOSTED_FORM_THEME, link?.configs.compact ?? false);
  }, [link, locale]);

  useEffect(() => {
    if (!link || !api) return;
    let stopped = false;
    setLoaded({ kind: 'loading' });
    api
      .getOrder()
      .then((order) => {
        if (!stopped) setLoaded(settle(order, link));
      })
      .catch((error: unknown) => {
        if (!stopped) setLoaded(loadProblem(error, t));
      });
    return () => {
      stopped = true;
    };
  }, [api, link, t, attempt]);

  // An order another attempt holds shows "in progress" until that attempt ends: paid, or payable again.
  useEffect(() => {
    if (loaded.kind !== 'closed' || !isBeingPaid(loaded.order) || !api || !link) return;
    return follow({
      read: () => api.getOrder(),
      settled: (order) => !isBeingPaid(order),
      onSettled: (order) => setLoaded(settle(order, link)),
    });
  }, [loaded, api, link, t]);

  const order = loaded.kind === 'ready' || loaded.kind === 'closed' ? loaded.order : null;
  useEffect(() => {
    document.title = order ? t.pageTitle(order.merchantName) : t.loading;
  }, [order, t]);

  return (
    <main class="page">
      <div class="panel" aria-busy={loaded.kind === 'loading' ? 'true' : undefined}>
        {order?.merchantMode === 'sandbox' && (
          <p class="test-banner" role="note">
            {t.testMode}
          </p>
        )}
        {order && <Summary order={order} t={t} amount={formatAmount(order.amount, order.currency, locale)} />}
        {loaded.kind === 'loading' && (
          <div class="loading">
            <Spinner /> <span>{t.loading}</span>
          </div>
        )}
        {loaded.kind === 'problem' && (
          <Problem
            t={t}
            title={loaded.title}
            text={loaded.text}
            detail={loaded.detail}
            onRetry={loaded.retry ? () => setAttempt(attempt + 1) : undefined}
          />
        )}
        {loaded.kind === 'closed' && (
          <ClosedOrder order={loaded.order} t={t} returnUrl={loaded.returnUrl} noMethod={loaded.noMethod} />
        )}
        {loaded.kind === 'ready' && api && link && (
          <CheckoutFlow
            order={loaded.order}
            configs={loaded.configs}
            api={api}
            t={t}
            onClosed={(current) => {
              const next = settle(current, link);
              if (next.kind === 'closed') setLoaded(next);
              return next.kind === 'closed';
            }}
          />
        )}
      </div>
    </main>
  );
}

function settle(order: CheckoutOrderView, link: CheckoutLink): Loaded {
  // The link is unsigned: its redirectUrl counts only on an origin the order or its merchant allows.
  const asked = link.configs.redirectUrl;
  const askedAllowed = asked !== '' && isAllowedTarget(asked, order.allowedOrigins);
  if (asked && !askedAllowed)
    console.warn(
      `configs.redirectUrl ignored: ${new URL(asked).origin} is not one of the merchant's checkout origins`,
    );
  const redirectUrl = askedAllowed ? asked : isHttpUrl(order.redirectUrl) ? order.redirectUrl : '';
  const methods = order.paymentMethods.filter((method) => FORM_METHODS.includes(method));
  const closed = !OPEN_ORDER_STATUSES.includes(order.status) || order.authorized || isBeingPaid(order);
  // An open order none of whose methods this form takes (or its currency allows) says so, not "closed".
  const noMethod = !closed && methods.length === 0;
  if (closed || noMethod) {
    const returnUrl = redirectUrl
      ? redirectTarget(redirectUrl, { orderId: order.orderId, status: order.status })
      : null;
    return { kind: 'closed', order, returnUrl, noMethod };
  }
  // Nowhere to return the shopper to (a payment link sent by mail, an order made without a
  // redirectUrl): the form takes the payment and keeps its outcome on its own landing page.
  const stays = redirectUrl === '';
  return {
    kind: 'ready',
    order: { ...order, paymentMethods: methods },
    configs: {
      ...link.configs,
      redirectUrl,
      autoRedirect: link.configs.autoRedirect && !stays,
      skipATMSuccessPage: link.configs.skipATMSuccessPage && !stays,
    },
  };
}

function loadProblem(error: unknown, t: Messages): Loaded {
  if (error instanceof ApiError && (error.status === 404 || error.code === 'BYRD901')) {
    return { kind: 'problem', title: t.notFoundTitle, text: t.notFoundText };
  }
  if (error instanceof ApiError && error.status === 429) {
    return { kind: 'problem', title: t.loadFailedTitle, text: t.tooMany, retry: true };
  }
  if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
    return { kind: 'problem', title: t.invalidLinkTitle, text: t.invalidLinkText, detail: error.description };
  }
  return { kind: 'problem', title: t.loadFailedTitle, text: t.loadFailedText, retry: true };
}

/**
 * A failure after which the order may have moved on: a refusal (422), or an answer lost on the way
 * (offline, timeout, 5xx) to a request that may have charged the card all the same.
 */
function mayHaveMovedOn(failure: unknown): boolean {
  return (
    failure instanceof ApiError && (failure.status === 422 || failure.status === 0 || failure.status >= 500)
  );
}

function Summary({ order, t, amount }: { order: CheckoutOrderView; t: Messages; amount: string }) {
  return (
    <header class="summary">
      <h1 class="merchant">{order.merchantName}</h1>
      <p class="amount">
        <span class="sr-only">{t.amountToPay}: </span>
        {amount}
      </p>
      {order.orderRef && <p class="order-ref">{t.orderRef(order.orderRef)}</p>}
    </header>
  );
}

type View =
  | { name: 'methods' }
  | { name: FormMethod }
  | { name: 'reference'; payment: CheckoutPaymentView }
  | { name: 'waiting'; payment: CheckoutPaymentView }
  | { name: 'outcome'; payment: CheckoutPaymentView }
  | { name: 'leaving'; url: string; tone: 'success' | 'failure' | 'info'; title: string };

/**
 * SPEC's rules for `defaultPaymentMethod`: one method → straight to it; a default among several →
 * open it (with a way back to the list); a default that is not available, or none → the list.
 */
export function initialView(methods: readonly PaymentMethod[], preferred: PaymentMethod | null): View {
  if (methods.length === 1) return { name: methods[0] as FormMethod };
  if (preferred && methods.includes(preferred)) return { name: preferred as FormMethod };
  return { name: 'methods' };
}

function CheckoutFlow({
  order,
  configs,
  api,
  t,
  onClosed,
}: {
  order: CheckoutOrderView;
  configs: ResolvedHostedFormConfigs;
  api: CheckoutApi;
  t: Messages;
  /** Shows the closed-order page when `order` cannot be paid here now; true then. */
  onClosed: (order: CheckoutOrderView) => boolean;
}) {
  const methods = order.paymentMethods as FormMethod[];
  const [view, setViewState] = useState<View>(() => initialView(methods, configs.defaultPaymentMethod));
  const [moved, setMoved] = useState(false);
  const [busy, setBusy] = useState(false);
  const closed = useRef(onClosed);
  closed.current = onClosed;
  const setView = (next: View) => {
    setMoved(true);
    setBusy(false);
    setViewState(next);
  };

  const checkout: Checkout = useMemo(() => {
    const amount = formatAmount(order.amount, order.currency, configs.locale);
    const leave = (status: string, payment?: CheckoutPaymentView) => {
      if (!configs.redirectUrl) {
        // Nowhere to return to: a payment's outcome, or the order as it now is, stays on this page.
        if (payment) setView({ name: 'outcome', payment });
        else
          void api.getOrder().then(
            (current) => closed.current(current),
            () => undefined,
          );
        return;
      }
      const params = { orderId: order.orderId, status, transactionId: payment?.transactionId };
      const url = redirectTarget(configs.redirectUrl, params);
      const [tone, title]: ['success' | 'failure' | 'info', string] =
        status === 'Success'
          ? ['success', order.isPreAuth ? t.authorizedTitle : t.successTitle]
          : status === 'canceled'
            ? ['failure', t.canceledTitle]
            : isPending(status)
              ? ['info', t.processingTitle]
              : ['failure', t.failedTitle];
      setView({ name: 'leaving', url, tone, title });
      // A success leaves once its order shows it too: the merchant's page checks the order then.
      const shown = new Promise((resolve) => window.setTimeout(resolve, timing('leaveDelayMs')));
      const shownInOrder = status === 'Success' ? orderShowsPayment(api) : undefined;
      void Promise.all([shown, shownInOrder]).then(() => leaveTo(url, params, order.allowedOrigins));
    };
    const recheckOrder = async (failure?: unknown, lockIsOurs = false) => {
      if (failure !== undefined && !mayHaveMovedOn(failure)) return false;
      return api.getOrder().then(
        // A lock that may be this attempt's own (its release on its way) does not close the form;
        // an authorised pre-authorisation (`authorized`) is never a failed attempt's and does.
        (current) => closed.current(lockIsOurs ? { ...current, paymentLocked: false } : current),
        () => false,
      );
    };
    return { order, configs, api, t, locale: configs.locale, amount, leave, recheckOrder };
  }, [order, configs, api, t]);

  // With autoRedirect a success returns the shopper at once; anything else, a payment still being
  // processed included, shows the outcome page (which follows a pending payment until it settles).
  const showResult = (payment: CheckoutPaymentView) => {
    if (configs.autoRedirect && payment.status === 'Success') checkout.leave(payment.status, payment);
    else setView({ name: 'outcome', payment });
  };
  const mbwaySettled = async (payment: CheckoutPaymentView) => {
    // Another tab may have paid the order, which voided this request (Canceled): show the order as
    // it is, not this attempt's end. The request never held the order, so a lock is another's.
    if (payment.status !== 'Success' && (await checkout.recheckOrder())) return;
    if (payment.status === 'Success' || !configs.autoRedirect) showResult(payment);
    else checkout.leave(payment.status, payment);
  };

  const choosing =
    view.name === 'methods' || view.name === 'card' || view.name === 'multibanco' || view.name === 'mbway';
  const canGoBack = methods.length > 1 && view.name !== 'methods' && choosing && !busy;

  return (
    <CheckoutContext.Provider value={checkout}>
      <FocusOnMount.Provider value={moved}>
        <div class="content">
          {canGoBack && (
            <button type="button" class="back" onClick={() => setView({ name: 'methods' })}>
              <IconBack /> {t.backToMethods}
            </button>
          )}
          {view.name === 'methods' && <MethodList methods={methods} onChoose={(name) => setView({ name })} />}
          {view.name === 'card' && <CardStep onResult={showResult} onBusyChange={setBusy} />}
          {view.name === 'multibanco' && (
            <MultibancoStep
              onReference={(payment) => setView({ name: 'reference', payment })}
              onBusyChange={setBusy}
            />
          )}
          {view.name === 'mbway' && (
            <MbWayStep
              onRequested={(payment) => setView({ name: 'waiting', payment })}
              onBusyChange={setBusy}
            />
          )}
          {view.name === 'reference' && <MultibancoReference payment={view.payment} />}
          {view.name === 'waiting' && (
            <MbWayWaiting payment={view.payment} onSettled={(payment) => void mbwaySettled(payment)} />
          )}
          {view.name === 'outcome' && (
            <Outcome
              payment={view.payment}
              onRetry={() => setView(initialView(methods, view.payment.type))}
            />
          )}
          {view.name === 'leaving' && <Leaving url={view.url} tone={view.tone} title={view.title} />}
        </div>
        {configs.showCancelButton && choosing && !busy && <CancelOrder />}
      </FocusOnMount.Provider>
    </CheckoutContext.Provider>
  );
}

function MethodList({
  methods,
  onChoose,
}: {
  methods: FormMethod[];
  onChoose: (method: FormMethod) => void;
}) {
  const { t } = useCheckout();
  const names: Record<FormMethod, [string, string]> = {
    card: [t.methodCard, t.methodCardHint],
    multibanco: [t.methodMultibanco, t.methodMultibancoHint],
    mbway: [t.methodMbway, t.methodMbwayHint],
  };
  return (
    <section class="step" aria-labelledby="methods-title">
      <ScreenTitle id="methods-title">{t.chooseMethod}</ScreenTitle>
      <ul class="methods">
        {methods.map((method) => (
          <li key={method}>
            <button type="button" class="method" data-method={method} onClick={() => onChoose(method)}>
              <MethodMark method={method} />
              <span class="method-text">
                <span class="method-name">{names[method][0]}</span>
                <span class="method-hint">{names[method][1]}</span>
              </span>
              <IconChevron />
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** `showCancelButton`: cancels the order (after a confirmation) and returns to the merchant. */
function CancelOrder() {
  const { api, t, order, leave, recheckOrder } = useCheckout();
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const keepPaying = useRef<HTMLButtonElement>(null);
  const cancelButton = useRef<HTMLButtonElement>(null);
  const asked = useRef(false);

  useEffect(() => {
    // The safe answer takes the focus when the question appears; the cancel button again after "No".
    if (confirming) keepPaying.current?.focus();
    else if (asked.current) cancelButton.current?.focus();
    asked.current = asked.current || confirming;
  }, [confirming]);

  const cancel = async () => {
    setBusy(true);
    setError(null);
    try {
      const result = await api.cancel();
      leave(result.status);
    } catch (failure) {
      setBusy(false);
      void recheckOrder(failure);
      const message = failure instanceof ApiError && failure.status === 0 ? t.network : t.generic;
      setError(message);
      announce(message);
    }
  };

  return (
    <div class="cancel-bar">
      {confirming ? (
        <div class="cancel-confirm" role="group" aria-labelledby="cancel-question">
          <p id="cancel-question">{t.cancelConfirm(order.merchantName)}</p>
          {error && <p class="field-error">{error}</p>}
          <div class="actions">
            <Button variant="secondary" busy={busy} busyLabel={t.canceling} onClick={() => void cancel()}>
              {t.cancelYes}
            </Button>
            <Button variant="link" onClick={() => setConfirming(false)} buttonRef={keepPaying}>
              {t.cancelNo}
            </Button>
          </div>
        </div>
      ) : (
        <Button variant="link" class="cancel" onClick={() => setConfirming(true)} buttonRef={cancelButton}>
          {t.cancel}
        </Button>
      )}
    </div>
  );
}
