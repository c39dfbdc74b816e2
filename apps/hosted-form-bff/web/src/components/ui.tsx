import type { ComponentChildren, JSX, Ref } from 'preact';
import { useContext, useEffect, useRef } from 'preact/hooks';
import { FocusOnMount } from '../context.js';

/** A screen's title; it takes the focus when the shopper arrives on the screen (so readers announce it). */
export function ScreenTitle({ children, id }: { children: ComponentChildren; id?: string }) {
  const focus = useContext(FocusOnMount);
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    if (focus) ref.current?.focus();
  }, [focus]);
  return (
    <h2 class="screen-title" id={id} tabIndex={-1} ref={ref}>
      {children}
    </h2>
  );
}

export function Spinner({ label }: { label?: string }) {
  return (
    <span
      class="spinner"
      role={label ? 'img' : undefined}
      aria-label={label}
      aria-hidden={label ? undefined : true}
    />
  );
}

type ButtonProps = Omit<JSX.ButtonHTMLAttributes<HTMLButtonElement>, 'ref' | 'class' | 'className'> & {
  class?: string;
  variant?: 'primary' | 'secondary' | 'link';
  busy?: boolean;
  busyLabel?: string;
  buttonRef?: Ref<HTMLButtonElement>;
};

/** A button that stays focusable while busy (aria-disabled) so the focus never falls to the page. */
export function Button({
  variant = 'primary',
  busy = false,
  busyLabel,
  children,
  onClick,
  type,
  buttonRef,
  class: extraClass,
  ...rest
}: ButtonProps) {
  return (
    <button
      {...rest}
      ref={buttonRef}
      type={type ?? 'button'}
      class={`button button-${variant}${busy ? ' is-busy' : ''}${extraClass ? ` ${extraClass}` : ''}`}
      aria-disabled={busy ? 'true' : undefined}
      aria-busy={busy ? 'true' : undefined}
      onClick={(event) => {
        if (busy) {
          event.preventDefault();
          return;
        }
        onClick?.(event);
      }}
    >
      {busy ? (
        <>
          <Spinner /> <span>{busyLabel ?? children}</span>
        </>
      ) : (
        children
      )}
    </button>
  );
}

export function Alert({
  children,
  id,
  alertRef,
}: {
  children: ComponentChildren;
  id?: string;
  alertRef?: Ref<HTMLDivElement>;
}) {
  return (
    <div class="alert" role="alert" id={id} tabIndex={-1} ref={alertRef}>
      <IconWarning />
      <p>{children}</p>
    </div>
  );
}

export function IconLock() {
  return (
    <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        d="M7 10V7a5 5 0 0 1 10 0v3M6 10h12a1 1 0 0 1 1 1v9a1 1 0 0 1-1 1H6a1 1 0 0 1-1-1v-9a1 1 0 0 1 1-1z"
        fill="none"
        stroke="currentColor"
        stroke-width="1.8"
        stroke-linecap="round"
      />
    </svg>
  );
}

export function IconWarning() {
  return (
    <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <circle cx="12" cy="12" r="9.2" fill="none" stroke="currentColor" stroke-width="1.8" />
      <path d="M12 7.5v5.5M12 16.5v.01" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
    </svg>
  );
}

export function IconCheck() {
  return (
    <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        d="M5 12.5l4.5 4.5L19 7.5"
        fill="none"
        stroke="currentColor"
        stroke-width="2.4"
        stroke-linecap="round"
        stroke-linejoin="round"
      />
    </svg>
  );
}

export function IconBack() {
  return (
    <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        d="M15 5l-7 7 7 7"
        fill="none"
        stroke="currentColor"
        stroke-width="2"
        stroke-linecap="round"
        stroke-linejoin="round"
      />
    </svg>
  );
}

export function IconChevron() {
  return (
    <svg class="icon chevron" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <path
        d="M9 5l7 7-7 7"
        fill="none"
        stroke="currentColor"
        stroke-width="2"
        stroke-linecap="round"
        stroke-linejoin="round"
      />
    </svg>
  );
}

export function IconCopy() {
  return (
    <svg class="icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
      <rect x="8" y="8" width="12" height="12" rx="2" fill="none" stroke="currentColor" stroke-width="1.8" />
      <path
        d="M16 8V6a2 2 0 0 0-2-2H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h2"
        fill="none"
        stroke="currentColor"
        stroke-width="1.8"
      />
    </svg>
  );
}

/** The mark inside each status badge (separate strokes have no joins, so one style draws them all). */
const STATUS_PATHS = {
  success: 'M14 25l7 7 13-15',
  failure: 'M17 17l14 14M31 17L17 31',
  waiting: 'M24 13v11l7 5',
  info: 'M24 15v.01M24 21v12',
} as const;

/** Status badge of a result page: a tick, a cross, a clock or an "i" in a circle. */
export function StatusMark({ tone }: { tone: keyof typeof STATUS_PATHS }) {
  return (
    <div class={`status-mark status-${tone}`} aria-hidden="true">
      <svg viewBox="0 0 48 48" focusable="false">
        <circle cx="24" cy="24" r="22" fill="currentColor" opacity="0.12" />
        <path
          d={STATUS_PATHS[tone]}
          fill="none"
          stroke="currentColor"
          stroke-width="3.5"
          stroke-linecap="round"
          stroke-linejoin="round"
        />
      </svg>
    </div>
  );
}
