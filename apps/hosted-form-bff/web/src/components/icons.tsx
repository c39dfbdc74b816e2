// Small inline marks for card brands and payment methods (no image requests, no icon font).
import type { PaymentMethod } from '@byrd/contracts/browser';

interface BadgeStyle {
  label: string;
  background: string;
  color: string;
}

const TEXT_BADGES: Record<string, BadgeStyle> = {
  'american-express': { label: 'AMEX', background: '#1f72cd', color: '#fff' },
  discover: { label: 'DISC', background: '#fff', color: '#e55c20' },
  'diners-club': { label: 'DC', background: '#0079be', color: '#fff' },
  jcb: { label: 'JCB', background: '#0b4ea2', color: '#fff' },
  unionpay: { label: 'UP', background: '#d10429', color: '#fff' },
  elo: { label: 'elo', background: '#000', color: '#ffcb05' },
  hiper: { label: 'Hiper', background: '#f37421', color: '#fff' },
  hipercard: { label: 'Hiper', background: '#b3131b', color: '#fff' },
  mir: { label: 'MIR', background: '#0f754e', color: '#fff' },
};

/** The brand of the number being typed (card-validator's type), or a neutral card. */
export function BrandMark({ type }: { type: string | null }) {
  return (
    <svg
      class="brand-mark"
      viewBox="0 0 36 24"
      aria-hidden="true"
      focusable="false"
      data-brand={type ?? 'unknown'}
    >
      {type === 'visa' ? (
        <>
          <rect x="0.5" y="0.5" width="35" height="23" rx="3.5" fill="#fff" stroke="#d5d9e0" />
          <text
            x="18"
            y="16.2"
            text-anchor="middle"
            font-size="10.5"
            font-weight="800"
            font-style="italic"
            fill="#1a1f71"
            font-family="Arial, sans-serif"
          >
            VISA
          </text>
        </>
      ) : type === 'mastercard' || type === 'maestro' ? (
        <>
          <rect x="0.5" y="0.5" width="35" height="23" rx="3.5" fill="#fff" stroke="#d5d9e0" />
          <circle cx="14.5" cy="12" r="6.5" fill={type === 'maestro' ? '#0099df' : '#eb001b'} />
          <circle
            cx="21.5"
            cy="12"
            r="6.5"
            fill={type === 'maestro' ? '#e60012' : '#f79e1b'}
            fill-opacity="0.9"
          />
        </>
      ) : type && TEXT_BADGES[type] ? (
        <>
          <rect
            x="0.5"
            y="0.5"
            width="35"
            height="23"
            rx="3.5"
            fill={TEXT_BADGES[type].background}
            stroke="#d5d9e0"
          />
          <text
            x="18"
            y="15.5"
            text-anchor="middle"
            font-size="8.5"
            font-weight="700"
            fill={TEXT_BADGES[type].color}
            font-family="Arial, sans-serif"
          >
            {TEXT_BADGES[type].label}
          </text>
        </>
      ) : (
        <>
          <rect
            x="0.5"
            y="0.5"
            width="35"
            height="23"
            rx="3.5"
            fill="none"
            stroke="currentColor"
            stroke-opacity="0.45"
          />
          <rect x="0.5" y="5" width="35" height="4" fill="currentColor" fill-opacity="0.35" />
          <rect x="4" y="14" width="12" height="3" rx="1" fill="currentColor" fill-opacity="0.35" />
        </>
      )}
    </svg>
  );
}

export function MethodMark({ method }: { method: PaymentMethod }) {
  if (method === 'multibanco') {
    return (
      <svg class="method-mark" viewBox="0 0 40 28" aria-hidden="true" focusable="false">
        <rect width="40" height="28" rx="5" fill="#0a5eb0" />
        <text
          x="20"
          y="18.5"
          text-anchor="middle"
          font-size="12"
          font-weight="800"
          fill="#fff"
          font-family="Arial, sans-serif"
        >
          MB
        </text>
      </svg>
    );
  }
  if (method === 'mbway') {
    return (
      <svg class="method-mark" viewBox="0 0 40 28" aria-hidden="true" focusable="false">
        <rect width="40" height="28" rx="5" fill="#d60f2c" />
        <text
          x="20"
          y="12.5"
          text-anchor="middle"
          font-size="8.5"
          font-weight="800"
          fill="#fff"
          font-family="Arial, sans-serif"
        >
          MB
        </text>
        <text
          x="20"
          y="22"
          text-anchor="middle"
          font-size="7"
          font-weight="700"
          fill="#fff"
          font-family="Arial, sans-serif"
        >
          WAY
        </text>
      </svg>
    );
  }
  return (
    <svg class="method-mark" viewBox="0 0 40 28" aria-hidden="true" focusable="false">
      <rect
        x="1"
        y="1"
        width="38"
        height="26"
        rx="4.5"
        fill="none"
        stroke="currentColor"
        stroke-width="1.6"
      />
      <rect x="1" y="7" width="38" height="5" fill="currentColor" fill-opacity="0.8" />
      <rect x="6" y="17" width="12" height="3.5" rx="1.2" fill="currentColor" fill-opacity="0.45" />
    </svg>
  );
}
