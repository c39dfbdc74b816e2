import type { ComponentChildren, JSX, Ref } from 'preact';

type InputProps = Omit<
  JSX.InputHTMLAttributes<HTMLInputElement>,
  'id' | 'ref' | 'label' | 'class' | 'className'
>;

interface FieldProps extends InputProps {
  id: string;
  label: string;
  hint?: string;
  error?: string | null;
  inputRef?: Ref<HTMLInputElement>;
  /** Shown inside the input, at its end (the card brand). */
  adornment?: ComponentChildren;
  class?: string;
}

/**
 * A labelled input whose hint and error are tied to it (`aria-describedby`) and whose invalid state
 * is exposed (`aria-invalid`), so assistive technology reads them when the field takes the focus.
 */
export function Field({
  id,
  label,
  hint,
  error,
  inputRef,
  adornment,
  class: className,
  ...input
}: FieldProps) {
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${error ? ' has-error' : ''}${className ? ` ${className}` : ''}`}>
      <label for={id}>{label}</label>
      <div class="control">
        <input
          {...input}
          id={id}
          ref={inputRef}
          aria-invalid={error ? 'true' : 'false'}
          aria-describedby={describedBy}
        />
        {adornment && <span class="adornment">{adornment}</span>}
      </div>
      {hint && (
        <p class="hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}
