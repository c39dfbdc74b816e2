import { useEffect, useState } from 'preact/hooks';
import type { CheckoutPaymentView } from '@byrd/contracts/browser';
import { announce } from '../announce.js';
import { useCheckout } from '../context.js';
import { formatAmount, formatDateTime, groupDigits } from '../format.js';
import type { CopyItem } from '../i18n.js';
import { usePaymentRequest } from './payment-request.js';
import { Alert, Button, IconCheck, IconCopy, ScreenTitle, StatusMark } from './ui.js';

/** Multibanco: asks for an entity and reference (then shows them, or leaves with skipATMSuccessPage). */
export function MultibancoStep({
  onReference,
  onBusyChange,
}: {
  onReference: (payment: CheckoutPaymentView) => void;
  onBusyChange: (busy: boolean) => void;
}) {
  const { api, t, configs, leave } = useCheckout();
  const { busy, error, alertRef, begin, fail } = usePaymentRequest(onBusyChange);

  const start = async () => {
    if (busy) return;
    begin();
    try {
      const payment = await api.pay({ type: 'multibanco' });
      if (configs.skipATMSuccessPage) {
        leave(payment.status, payment);
        return;
      }
      onReference(payment);
    } catch (failure) {
      fail(failure);
    }
  };

  return (
    <section class="step" aria-labelledby="multibanco-title">
      <ScreenTitle id="multibanco-title">{t.mbTitle}</ScreenTitle>
      <p class="lead">{t.mbIntro}</p>
      {error && <Alert alertRef={alertRef}>{error}</Alert>}
      <Button busy={busy} busyLabel={t.processing} onClick={() => void start()}>
        {t.mbGenerate}
      </Button>
    </section>
  );
}

/** The entity, reference, amount and deadline, each with a copy button. */
export function MultibancoReference({ payment }: { payment: CheckoutPaymentView }) {
  const { t, locale, order, leave, configs } = useCheckout();
  const reference = payment.multibanco!;
  const amount = formatAmount(reference.amount, payment.currency, locale);
  const rows: { item: CopyItem; label: string; shown: string; copied: string }[] = [
    { item: 'entity', label: t.entity, shown: reference.entity, copied: reference.entity },
    {
      item: 'reference',
      label: t.reference,
      shown: groupDigits(reference.reference),
      copied: reference.reference,
    },
    { item: 'amount', label: t.amount, shown: amount, copied: reference.amount },
  ];
  return (
    <section class="step result" aria-labelledby="reference-title">
      <StatusMark tone="waiting" />
      <ScreenTitle id="reference-title">{t.mbReferenceTitle}</ScreenTitle>
      <p class="lead">{t.mbReferenceIntro}</p>
      <dl class="reference">
        {rows.map((row) => (
          <div class="reference-row" key={row.item}>
            <dt>{row.label}</dt>
            <dd>
              <span class="reference-value" data-field={row.item}>
                {row.shown}
              </span>
              <CopyButton value={row.copied} label={t.copy[row.item]} done={t.copied[row.item]} />
            </dd>
          </div>
        ))}
        {reference.expiresAt && (
          <div class="reference-row">
            <dt>{t.payBy}</dt>
            <dd>
              <span class="reference-value small">{formatDateTime(reference.expiresAt, locale)}</span>
            </dd>
          </div>
        )}
      </dl>
      <p class="note">{t.mbNote}</p>
      {configs.redirectUrl && (
        <Button onClick={() => leave(payment.status, payment)}>{t.returnTo(order.merchantName)}</Button>
      )}
    </section>
  );
}

function CopyButton({ value, label, done }: { value: string; label: string; done: string }) {
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = window.setTimeout(() => setCopied(false), 2500);
    return () => window.clearTimeout(timer);
  }, [copied]);
  const copy = async () => {
    if (await writeClipboard(value)) {
      setCopied(true);
      announce(done);
    }
  };
  return (
    <button
      type="button"
      class="copy"
      onClick={() => void copy()}
      aria-label={copied ? done : label}
      title={label}
    >
      {copied ? <IconCheck /> : <IconCopy />}
    </button>
  );
}

async function writeClipboard(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Inside an iframe without clipboard-write permission: the older copy command still works on a click.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.className = 'offscreen';
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    return ok;
  }
}
