/** A form field's own error, under the field and tied to it (aria-invalid, aria-describedby), not a banner over the form. */
import { useId, useState } from 'react';

export type FieldErrors<K extends string> = Partial<Record<K, string>>;

/** The attributes that tie an input to its error, when it has one. */
export function invalidProps(id: string, error: string | undefined): { 'aria-invalid'?: true; 'aria-describedby'?: string } {
  return error === undefined ? {} : { 'aria-invalid': true, 'aria-describedby': id };
}

export function FieldError({ id, error }: { readonly id: string; readonly error: string | undefined }) {
  if (error === undefined) return null;
  return (
    <span id={id} className="field-error" role="alert">
      {error}
    </span>
  );
}

/** A form's failure from main, shown at the field `pick` says it is about; cleared on the next submit. */
export function useFormError<K extends string>(pick: (message: string) => K) {
  const id = useId();
  const [error, setError] = useState<{ readonly field: K; readonly text: string } | null>(null);
  const at = (field: K) => (error?.field === field ? error.text : undefined);
  return {
    set: (text: string) => setError({ field: pick(text), text }),
    clear: () => setError(null),
    /** aria-invalid and aria-describedby for the field's input, when the error is its. */
    props: (field: K) => invalidProps(`${id}${field}`, at(field)),
    message: (field: K) => <FieldError id={`${id}${field}`} error={at(field)} />,
  };
}
