/** The window's one error banner: the last thing that failed outside a page of its own. */
import { useCallback, useState } from 'react';
import { errorText } from '../api.js';

export type Fail = (failure: unknown) => void;

export function useWindowError(): { readonly error: string | null; readonly fail: Fail; readonly dismiss: () => void } {
  const [error, setError] = useState<string | null>(null);
  const fail = useCallback<Fail>((failure) => setError(errorText(failure)), []);
  const dismiss = useCallback(() => setError(null), []);
  return { error, fail, dismiss };
}
