import { useRef, useState } from 'preact/hooks';
import { announce } from '../announce.js';
import { useCheckout } from '../context.js';
import { errorText } from './card-step.js';

/**
 * The busy state and the alert of a step that sends one payment request (Multibanco, MB WAY): `begin`
 * before the request, `fail` with what it threw (the alert says why and takes the focus; the order is
 * read again in case it closed meanwhile), `end` when the step stays for another try.
 */
export function usePaymentRequest(onBusyChange: (busy: boolean) => void) {
  const { t, recheckOrder } = useCheckout();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const alertRef = useRef<HTMLDivElement>(null);

  const end = () => {
    setBusy(false);
    onBusyChange(false);
  };
  return {
    busy,
    error,
    alertRef,
    begin() {
      setBusy(true);
      onBusyChange(true);
      setError(null);
      announce(t.processing);
    },
    fail(failure: unknown) {
      void recheckOrder(failure);
      setError(errorText(failure, t));
      requestAnimationFrame(() => alertRef.current?.focus());
      end();
    },
    end,
  };
}
