import type { JSX } from 'preact';
import { useMemo, useRef, useState } from 'preact/hooks';
import type { CheckoutPaymentView } from '@byrd/contracts/browser';
import { announce } from '../announce.js';
import { ApiError } from '../api.js';
import {
  checkCvv,
  checkExpiry,
  checkNumber,
  describeCard,
  formatCardNumber,
  formatExpiryInput,
  onlyDigits,
} from '../card.js';
import { useCheckout } from '../context.js';
import { isPending } from '../follow.js';
import type { Messages } from '../i18n.js';
import { authenticateWithBank, waitForOutcome } from '../three-ds.js';
import { Field } from './field.js';
import { BrandMark } from './icons.js';
import { Alert, Button, IconLock, ScreenTitle } from './ui.js';

type CardField = 'number' | 'expiry' | 'cvv' | 'holder';
const FIELD_ORDER: CardField[] = ['number', 'expiry', 'cvv', 'holder'];
type Errors = Partial<Record<CardField, string>>;

interface Values {
  number: string;
  expiry: string;
  cvv: string;
  holder: string;
}

function fieldError(field: CardField, values: Values, cvvSize: number, t: Messages): string | undefined {
  switch (field) {
    case 'number': {
      const problem = checkNumber(onlyDigits(values.number));
      return problem === 'required' ? t.numberRequired : problem === 'invalid' ? t.numberInvalid : undefined;
    }
    case 'expiry': {
      const problem = checkExpiry(values.expiry);
      if (problem === 'required') return t.expiryRequired;
      if (problem === 'past') return t.expiryPast;
      return problem === 'invalid' ? t.expiryInvalid : undefined;
    }
    case 'cvv': {
      const problem = checkCvv(values.cvv, cvvSize);
      return problem === 'required' ? t.cvvRequired : problem === 'length' ? t.cvvLength(cvvSize) : undefined;
    }
    case 'holder':
      return values.holder.trim() ? undefined : t.holderRequired;
  }
}

/** Where the API's field names (`card.number`, ...) land on the form. */
const API_FIELDS: Record<string, CardField> = {
  'card.number': 'number',
  'card.expiration': 'expiry',
  'card.cvv': 'cvv',
  'card.holder': 'holder',
};

type ThreeDSPhase = 'idle' | 'checking' | 'challenge';

/**
 * The card form: number with brand, expiry, security code, holder, optional "save my card"; then 3DS.
 * A payment that succeeded or is still being processed goes to `onResult`; a failed one stays here.
 */
export function CardStep({
  onResult,
  onBusyChange,
}: {
  onResult: (payment: CheckoutPaymentView) => void;
  onBusyChange: (busy: boolean) => void;
}) {
  const { order, api, t, amount, recheckOrder } = useCheckout();
  const [values, setValues] = useState<Values>({ number: '', expiry: '', cvv: '', holder: '' });
  const [errors, setErrors] = useState<Errors>({});
  const [saveCard, setSaveCard] = useState(false);
  const [formError, setFormError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [threeDS, setThreeDS] = useState<ThreeDSPhase>('idle');
  const submitting = useRef(false);
  const refs = {
    number: useRef<HTMLInputElement>(null),
    expiry: useRef<HTMLInputElement>(null),
    cvv: useRef<HTMLInputElement>(null),
    holder: useRef<HTMLInputElement>(null),
  };
  const alertRef = useRef<HTMLDivElement>(null);
  const challengeRef = useRef<HTMLDivElement>(null);
  const threeDSTitleRef = useRef<HTMLHeadingElement>(null);

  const digits = onlyDigits(values.number);
  const card = useMemo(() => describeCard(digits), [digits]);

  const update = (field: CardField, value: string) => {
    const next = { ...values, [field]: value };
    setValues((current) => ({ ...current, [field]: value }));
    // Once a field shows an error, it is checked again as the shopper fixes it.
    if (errors[field]) {
      const message = fieldError(field, next, describeCard(onlyDigits(next.number)).cvvSize, t);
      setErrors((current) => ({ ...current, [field]: message }));
    }
  };

  const onBlur = (field: CardField) => {
    if (!values[field] && !errors[field]) return;
    const message = fieldError(field, values, card.cvvSize, t);
    if (message !== errors[field]) {
      setErrors({ ...errors, [field]: message });
      if (message) announce(message);
    }
  };

  const onNumberInput = (event: JSX.TargetedEvent<HTMLInputElement>) => {
    const input = event.currentTarget;
    const caret = input.selectionStart ?? input.value.length;
    const digitsBeforeCaret = onlyDigits(input.value.slice(0, caret)).length;
    const raw = onlyDigits(input.value);
    const next = raw.slice(0, describeCard(raw).maxLength);
    const formatted = formatCardNumber(next, describeCard(next));
    input.value = formatted;
    let position = 0;
    for (let seen = 0; position < formatted.length && seen < digitsBeforeCaret; position++) {
      if (formatted[position] !== ' ') seen++;
    }
    if (document.activeElement === input) input.setSelectionRange(position, position);
    update('number', formatted);
  };

  const onExpiryInput = (event: JSX.TargetedEvent<HTMLInputElement, InputEvent>) => {
    const input = event.currentTarget;
    const deleting = event.inputType?.startsWith('delete') ?? false;
    const formatted = formatExpiryInput(input.value, deleting);
    input.value = formatted;
    update('expiry', formatted);
  };

  const onCvvInput = (event: JSX.TargetedEvent<HTMLInputElement>) => {
    const input = event.currentTarget;
    const next = onlyDigits(input.value).slice(0, 4);
    input.value = next;
    update('cvv', next);
  };

  const setBusyState = (next: boolean) => {
    setBusy(next);
    onBusyChange(next);
  };

  const showFormError = (message: string) => {
    setFormError(message);
    // The alert is read by screen readers (role=alert) and takes the focus, so the shopper starts over from it.
    requestAnimationFrame(() => alertRef.current?.focus());
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    if (submitting.current) return;
    const found: Errors = {};
    for (const field of FIELD_ORDER) {
      const message = fieldError(field, values, card.cvvSize, t);
      if (message) found[field] = message;
    }
    const invalid = FIELD_ORDER.filter((field) => found[field]);
    setErrors(found);
    if (invalid.length > 0) {
      setFormError(null);
      refs[invalid[0]].current?.focus();
      announce(`${t.formErrors(invalid.length)} ${found[invalid[0]]}`);
      return;
    }

    submitting.current = true;
    setBusyState(true);
    setFormError(null);
    announce(t.processing);
    let handedOn = false;
    try {
      let payment = await api.pay({
        type: 'card',
        card: {
          number: digits,
          expiration: values.expiry,
          cvv: values.cvv,
          holder: values.holder.trim(),
        },
        ...(order.saveCardOffered && saveCard ? { saveCard: true } : {}),
      });
      let authentication: string | null = null;
      if (payment.threeDSecure && (payment.code === 'BYRD207' || payment.status === 'Created')) {
        setThreeDS('checking');
        announce(t.threeDSWorking);
        authentication = await authenticateWithBank(
          order.threeDSecureSdkUrl,
          payment,
          challengeRef.current!,
          () => {
            setThreeDS('challenge');
            announce(t.threeDSTitle);
            requestAnimationFrame(() => threeDSTitleRef.current?.focus());
          },
        );
        setThreeDS('idle');
        payment = await waitForOutcome(api, payment.transactionId);
      }
      if (payment.status === 'Success' || beingProcessed(payment, authentication)) {
        handedOn = true;
        onResult(payment);
        return;
      }
      setValues((current) => ({ ...current, cvv: '' }));
      if (payment.refusedByOrder) {
        // The order refused this attempt before the bank saw the card (another tab's payment holds
        // or paid it, or it closed): no decline. It never held the lock, so the order as it stands
        // is the answer: "in progress", followed until it settles, or paid, or closed; free again,
        // the shopper may simply try again.
        if (await recheckOrder()) {
          handedOn = true;
          return;
        }
        showFormError(t.tryLater);
        return;
      }
      // Another tab may have paid the order (this attempt was then refused): show that, not
      // "declined". A lock alone may still be this attempt's own, on its way out: the form stays.
      if (await recheckOrder(undefined, true)) {
        handedOn = true;
        return;
      }
      if (payment.status === 'Denied' || payment.status === 'Canceled') {
        const authFailed =
          authentication !== null && authentication !== 'Authorized' && authentication !== 'NotEnrolled';
        showFormError(authFailed ? t.authFailed : t.declined);
      } else {
        showFormError(t.tryLater);
      }
    } catch (error) {
      setThreeDS('idle');
      if (error instanceof ApiError && error.fields.some((item) => API_FIELDS[item.field])) {
        const fromApi: Errors = {};
        for (const item of error.fields) {
          const field = API_FIELDS[item.field];
          if (field) fromApi[field] = invalidText(field, card.cvvSize, t);
        }
        setErrors(fromApi);
        const first = FIELD_ORDER.find((field) => fromApi[field]);
        if (first) {
          refs[first].current?.focus();
          announce(`${t.formErrors(Object.keys(fromApi).length)} ${fromApi[first]}`);
        }
      } else if (await recheckOrder(error)) {
        // The order moved on (paid, held by this or another attempt whose answer was lost, closed).
        handedOn = true;
      } else {
        showFormError(errorText(error, t));
      }
    } finally {
      if (!handedOn) {
        submitting.current = false;
        setBusyState(false);
      }
    }
  };

  const challenge = threeDS === 'challenge';
  return (
    <section class="step" aria-labelledby="card-title">
      <div class="step-body" hidden={challenge}>
        <ScreenTitle id="card-title">{t.cardTitle}</ScreenTitle>
        <form
          class="card-form"
          noValidate
          onSubmit={submit}
          aria-describedby={formError ? 'card-form-error' : undefined}
        >
          {formError && (
            <Alert id="card-form-error" alertRef={alertRef}>
              {formError}
            </Alert>
          )}
          <Field
            id="card-number"
            name="cardnumber"
            label={t.cardNumber}
            error={errors.number}
            inputRef={refs.number}
            type="text"
            inputMode="numeric"
            autoComplete="cc-number"
            autoCorrect="off"
            spellcheck={false}
            placeholder="1234 1234 1234 1234"
            maxLength={23}
            required
            aria-required="true"
            readOnly={busy}
            value={values.number}
            onInput={onNumberInput}
            onBlur={() => onBlur('number')}
            adornment={
              <>
                <BrandMark type={card.type} />
                {card.name && <span class="sr-only">{t.cardBrand(card.name)}</span>}
              </>
            }
          />
          <div class="field-row">
            <Field
              id="card-expiry"
              name="exp-date"
              label={t.expiry}
              hint={t.expiryHint}
              error={errors.expiry}
              inputRef={refs.expiry}
              type="text"
              inputMode="numeric"
              autoComplete="cc-exp"
              autoCorrect="off"
              spellcheck={false}
              placeholder={t.expiryHint}
              maxLength={7}
              required
              aria-required="true"
              readOnly={busy}
              value={values.expiry}
              onInput={onExpiryInput}
              onBlur={() => onBlur('expiry')}
            />
            <Field
              id="card-cvv"
              name="cvc"
              label={t.cvv}
              hint={t.cvvHint(card.cvvSize)}
              error={errors.cvv}
              inputRef={refs.cvv}
              type="text"
              inputMode="numeric"
              autoComplete="cc-csc"
              autoCorrect="off"
              spellcheck={false}
              placeholder={card.cvvSize === 4 ? '1234' : '123'}
              maxLength={4}
              required
              aria-required="true"
              readOnly={busy}
              value={values.cvv}
              onInput={onCvvInput}
              onBlur={() => onBlur('cvv')}
            />
          </div>
          <Field
            id="card-holder"
            name="ccname"
            label={t.holder}
            error={errors.holder}
            inputRef={refs.holder}
            type="text"
            autoComplete="cc-name"
            autoCapitalize="words"
            spellcheck={false}
            maxLength={100}
            required
            aria-required="true"
            readOnly={busy}
            value={values.holder}
            onInput={(event) => update('holder', event.currentTarget.value)}
            onBlur={() => onBlur('holder')}
          />
          {order.saveCardOffered && (
            <div class="checkbox">
              <input
                id="save-card"
                type="checkbox"
                checked={saveCard}
                disabled={busy}
                aria-describedby="save-card-hint"
                onChange={(event) => setSaveCard(event.currentTarget.checked)}
              />
              <label for="save-card">
                <span class="checkbox-label">{t.saveCard}</span>
                <span class="hint" id="save-card-hint">
                  {t.saveCardHint(order.merchantName)}
                </span>
              </label>
            </div>
          )}
          <Button
            type="submit"
            busy={busy}
            busyLabel={threeDS === 'checking' ? t.threeDSWorking : t.processing}
            class="pay"
          >
            {t.pay(amount)}
          </Button>
          <p class="secure-note">
            <IconLock /> {t.securePayment}
          </p>
        </form>
      </div>
      <div class={`threeds${challenge ? '' : ' is-idle'}`}>
        {challenge && (
          <>
            <h2 class="screen-title" tabIndex={-1} ref={threeDSTitleRef}>
              {t.threeDSTitle}
            </h2>
            <p class="lead">{t.threeDSText}</p>
          </>
        )}
        <div class="threeds-frame" ref={challengeRef} />
      </div>
    </section>
  );
}

/**
 * Whether the attempt may hold the order now (at the acquirer, or its answer lost on the way back):
 * the page then follows it, as another try could only be refused. A payment still Created after its
 * 3DS broke off never reached the acquirer: the shopper may try again here.
 */
function beingProcessed(payment: CheckoutPaymentView, authentication: string | null): boolean {
  return isPending(payment.status) && !(payment.status === 'Created' && authentication === null);
}

function invalidText(field: CardField, cvvSize: number, t: Messages): string {
  switch (field) {
    case 'number':
      return t.numberInvalid;
    case 'expiry':
      return t.expiryInvalid;
    case 'cvv':
      return t.cvvLength(cvvSize);
    case 'holder':
      return t.holderRequired;
  }
}

/** A sentence for the shopper in the page's language (never the API's `description`, which is English). */
export function errorText(error: unknown, t: Messages): string {
  if (!(error instanceof ApiError)) return t.generic;
  if (error.status === 0) return t.network;
  if (error.status === 429) return t.tooMany;
  return t.generic;
}
