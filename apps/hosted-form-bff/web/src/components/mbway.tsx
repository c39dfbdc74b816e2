import { useEffect, useRef, useState } from 'preact/hooks';
import { type CheckoutPaymentView, normalizeMbWayPhone } from '@byrd/contracts/browser';
import { announce } from '../announce.js';
import { ApiError } from '../api.js';
import { useCheckout } from '../context.js';
import { followPayment } from '../follow.js';
import { formatPhone } from '../format.js';
import { usePaymentRequest } from './payment-request.js';
import { Field } from './field.js';
import { Alert, Button, ScreenTitle, Spinner, StatusMark } from './ui.js';

/** MB WAY: the shopper's phone, then a request they accept in the app. */
export function MbWayStep({
  onRequested,
  onBusyChange,
}: {
  onRequested: (payment: CheckoutPaymentView) => void;
  onBusyChange: (busy: boolean) => void;
}) {
  const { api, t } = useCheckout();
  const [phone, setPhone] = useState('');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const { busy, error, alertRef, begin, fail, end } = usePaymentRequest(onBusyChange);
  const inputRef = useRef<HTMLInputElement>(null);

  const check = (value: string) =>
    !value.trim() ? t.phoneRequired : normalizeMbWayPhone(value) ? null : t.phoneInvalid;

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    const problem = check(phone);
    setFieldError(problem);
    if (problem) {
      inputRef.current?.focus();
      announce(`${t.formErrors(1)} ${problem}`);
      return;
    }
    begin();
    try {
      onRequested(await api.pay({ type: 'mbway', mbway: { phoneNumber: normalizeMbWayPhone(phone)! } }));
    } catch (failure) {
      if (!(failure instanceof ApiError && failure.fields.some((item) => item.field.startsWith('mbway')))) {
        return fail(failure);
      }
      setFieldError(t.phoneInvalid);
      inputRef.current?.focus();
      announce(t.phoneInvalid);
      end();
    }
  };

  return (
    <section class="step" aria-labelledby="mbway-title">
      <ScreenTitle id="mbway-title">{t.mbwayTitle}</ScreenTitle>
      <p class="lead">{t.mbwayIntro}</p>
      <form noValidate onSubmit={submit}>
        {error && <Alert alertRef={alertRef}>{error}</Alert>}
        <Field
          id="mbway-phone"
          name="tel"
          label={t.phone}
          hint={t.phoneHint}
          error={fieldError}
          inputRef={inputRef}
          type="tel"
          inputMode="tel"
          autoComplete="tel"
          placeholder="912 345 678"
          maxLength={20}
          required
          aria-required="true"
          readOnly={busy}
          value={phone}
          onInput={(event) => {
            setPhone(event.currentTarget.value);
            if (fieldError) setFieldError(check(event.currentTarget.value));
          }}
          onBlur={() => {
            if (phone) setFieldError(check(phone));
          }}
        />
        <Button type="submit" busy={busy} busyLabel={t.processing}>
          {t.mbwaySend}
        </Button>
      </form>
    </section>
  );
}

/** Waits for the shopper to accept in the app, reading the payment until it settles. */
export function MbWayWaiting({
  payment,
  onSettled,
}: {
  payment: CheckoutPaymentView;
  onSettled: (payment: CheckoutPaymentView) => void;
}) {
  const { api, t, amount } = useCheckout();
  const [round, setRound] = useState(0);
  const [stalled, setStalled] = useState(false);
  const settled = useRef(onSettled);
  settled.current = onSettled;

  useEffect(() => {
    announce(t.mbwayWaitingStatus);
    return followPayment(api, payment.transactionId, {
      onSettled: (current) => settled.current(current),
      onGaveUp: () => {
        setStalled(true);
        announce(t.mbwayStillWaiting);
      },
    });
  }, [api, payment.transactionId, round, t]);

  const phone = formatPhone(payment.mbway?.phoneNumber ?? '');
  return (
    <section class="step result" aria-labelledby="waiting-title" aria-busy={stalled ? undefined : 'true'}>
      <StatusMark tone="waiting" />
      <ScreenTitle id="waiting-title">{t.mbwayWaitingTitle}</ScreenTitle>
      <p class="lead">{t.mbwayWaitingText(amount, phone)}</p>
      {stalled ? (
        <>
          <p class="status-line">{t.mbwayStillWaiting}</p>
          <Button
            variant="secondary"
            onClick={() => {
              setStalled(false);
              setRound(round + 1);
            }}
          >
            {t.checkAgain}
          </Button>
        </>
      ) : (
        <p class="status-line">
          <Spinner /> {t.mbwayWaitingStatus}
        </p>
      )}
    </section>
  );
}
