/** A form field's own error, under the field and tied to it (aria-invalid, aria-describedby), not a banner over the form. */

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
