import { useEffect, useState } from 'preact/hooks';
import type { CheckoutOrderView, CheckoutPaymentView } from '@byrd/contracts/browser';
import { announce } from '../announce.js';
import { lastFour } from '../card.js';
import { useCheckout } from '../context.js';
import { followPayment, isPending } from '../follow.js';
import type { Messages } from '../i18n.js';
import { Button, ScreenTitle, Spinner, StatusMark } from './ui.js';

/**
 * The form's own landing page (autoRedirect false), and the page of a payment still being processed:
 * the payment as the backend reports it, read again until it settles. With autoRedirect, a success
 * seen here returns the shopper like any other.
 */
export function Outcome({ payment, onRetry }: { payment: CheckoutPaymentView; onRetry: () => void }) {
  const { api, t, order, amount, leave, configs, recheckOrder } = useCheckout();
  // A pending payment shows as such at once; a settled one is first checked with the backend.
  const [checked, setChecked] = useState<CheckoutPaymentView | null>(
    isPending(payment.status) ? payment : null,
  );

  useEffect(
    () =>
      followPayment(api, payment.transactionId, {
        onRead: setChecked,
        onSettled: (current) => {
          if (configs.autoRedirect && current.status === 'Success') leave(current.status, current);
          // Refused by its order (another payment holds or paid it): the order's page replaces this one.
          else if (current.refusedByOrder) void recheckOrder();
        },
        immediately: true,
      }),
    [api, payment.transactionId, configs.autoRedirect, leave, recheckOrder],
  );

  const title = checked && outcomeTitle(checked, order, t);
  useEffect(() => {
    if (title) announce(title);
  }, [title]);

  if (!checked) {
    return (
      <section class="step result" aria-busy="true">
        <p class="status-line">
          <Spinner /> {t.processing}
        </p>
      </section>
    );
  }
  const success = checked.status === 'Success';
  const pending = isPending(checked.status);
  return (
    <section
      class="step result"
      aria-labelledby="outcome-title"
      aria-busy={pending ? 'true' : undefined}
      data-status={checked.status}
    >
      <StatusMark tone={success ? 'success' : pending ? 'waiting' : 'failure'} />
      <ScreenTitle id="outcome-title">{title}</ScreenTitle>
      <p class="lead">
        {success
          ? (order.isPreAuth ? t.authorizedText : t.successText)(amount, order.merchantName)
          : pending
            ? t.processingText
            : checked.refusedByOrder
              ? t.tryLater // not sent to the bank: no decline
              : checked.type === 'mbway'
                ? t.mbwayFailed
                : t.declined}
      </p>
      {checked.savedCard && <p class="note">{t.cardSaved(lastFour(checked.savedCard.maskedCardNumber))}</p>}
      <dl class="details">
        <div>
          <dt>{t.transaction}</dt>
          <dd class="mono">{checked.transactionId}</dd>
        </div>
      </dl>
      <div class="actions">
        {!success && !pending && (
          <Button variant="primary" onClick={onRetry}>
            {t.tryAgain}
          </Button>
        )}
        {configs.redirectUrl && (
          <Button
            variant={success || pending ? 'primary' : 'secondary'}
            onClick={() => leave(checked.status, checked)}
          >
            {t.returnTo(order.merchantName)}
          </Button>
        )}
      </div>
    </section>
  );
}

function outcomeTitle(payment: CheckoutPaymentView, order: CheckoutOrderView, t: Messages): string {
  if (payment.status === 'Success') return order.isPreAuth ? t.authorizedTitle : t.successTitle;
  if (isPending(payment.status)) return t.processingTitle;
  return t.failedTitle;
}

/** Shown while the browser goes to the merchant's redirectUrl, with a link in case it does not. */
export function Leaving({
  url,
  tone,
  title,
}: {
  url: string;
  tone: 'success' | 'failure' | 'info';
  title: string;
}) {
  const { t, order } = useCheckout();
  useEffect(() => announce(`${title}. ${t.redirecting(order.merchantName)}`), [order, t, title]);
  return (
    <section class="step result" aria-labelledby="leaving-title" aria-busy="true">
      <StatusMark tone={tone} />
      <ScreenTitle id="leaving-title">{title}</ScreenTitle>
      <p class="status-line">
        <Spinner /> {t.redirecting(order.merchantName)}
      </p>
      <p>
        <a class="link" href={url} target="_top">
          {t.returnTo(order.merchantName)}
        </a>
      </p>
    </section>
  );
}

/**
 * Paid, authorised (a pre-authorisation awaiting capture), canceled, expired, refunded, busy with
 * another payment, or open but with no method this form can pay it with: nothing to pay here.
 */
export function ClosedOrder({
  order,
  t,
  returnUrl,
  noMethod = false,
}: {
  order: CheckoutOrderView;
  t: Messages;
  returnUrl: string | null;
  noMethod?: boolean;
}) {
  const [title, text, tone] = noMethod
    ? [t.noMethodTitle, t.noMethodText, 'info' as const]
    : closedTexts(order, t);
  useEffect(() => announce(title), [title]);
  return (
    <section class="step result" aria-labelledby="closed-title" data-order-status={order.status}>
      <StatusMark tone={tone} />
      <h2 class="screen-title" id="closed-title">
        {title}
      </h2>
      <p class="lead">{text}</p>
      {returnUrl && (
        <a class="button button-primary" href={returnUrl} target="_top">
          {t.returnTo(order.merchantName)}
        </a>
      )}
    </section>
  );
}

function closedTexts(
  order: CheckoutOrderView,
  t: Messages,
): [string, string, 'success' | 'failure' | 'waiting' | 'info'] {
  switch (order.status) {
    case 'paid':
      return [t.paidTitle, t.paidText, 'success'];
    case 'canceled':
      return [t.canceledTitle, t.closedText, 'failure'];
    case 'expired':
      return [t.expiredTitle, t.closedText, 'failure'];
    case 'refunded':
      return [t.refundedTitle, t.refundedText, 'info'];
    default:
      // Still `pending`: a pre-authorisation awaiting capture holds the money until the shop captures it.
      return order.authorized
        ? [t.authorizedOrderTitle, t.authorizedOrderText(order.merchantName), 'success']
        : [t.inProgressTitle, t.inProgressText, 'waiting'];
  }
}

/** A page the shopper cannot pay from: unknown order, broken link, or the service unreachable. */
export function Problem({
  title,
  text,
  detail,
  t,
  onRetry,
}: {
  title: string;
  text: string;
  detail?: string;
  t: Messages;
  onRetry?: () => void;
}) {
  useEffect(() => announce(title), [title]);
  return (
    <section class="step result" aria-labelledby="problem-title">
      <StatusMark tone="failure" />
      <h2 class="screen-title" id="problem-title">
        {title}
      </h2>
      <p class="lead">{text}</p>
      {onRetry && <Button onClick={onRetry}>{t.reload}</Button>}
      {detail && (
        <details class="technical">
          <summary>{t.technicalDetails}</summary>
          <p class="mono">{detail}</p>
        </details>
      )}
    </section>
  );
}
