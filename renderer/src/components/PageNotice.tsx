import { useMemo, useState } from 'react';
import { errorText } from '../api.js';

/** What a page's last action did, or why it failed. */
export interface Notice {
  readonly tone: 'info' | 'error';
  readonly text: string;
}

export interface NoticeSetters {
  info(text: string): void;
  fail(failure: unknown): void;
  clear(): void;
}

/** A page's notice and stable setters (safe to use inside effects and callbacks). */
export function usePageNotice(): readonly [Notice | null, NoticeSetters] {
  const [notice, setNotice] = useState<Notice | null>(null);
  const say = useMemo<NoticeSetters>(
    () => ({
      info: (text) => setNotice({ tone: 'info', text }),
      fail: (failure) => setNotice({ tone: 'error', text: errorText(failure) }),
      clear: () => setNotice(null),
    }),
    [],
  );
  return [notice, say];
}

/** The one-line banner under a page: errors are alerts, everything else a status. */
export function PageNotice({ notice }: { readonly notice: Notice | null }) {
  if (notice === null) return null;
  return (
    <div className={`banner banner-${notice.tone}`} role={notice.tone === 'error' ? 'alert' : 'status'}>
      {notice.text}
    </div>
  );
}

/** An error in a chat (an alert), or nothing. */
export function ErrorBanner({ text }: { readonly text: string | null }) {
  return text === null ? null : <PageNotice notice={{ tone: 'error', text }} />;
}

/** The window's error, with a way to dismiss it, or nothing. */
export function DismissibleError({ text, onDismiss }: { readonly text: string | null; readonly onDismiss: () => void }) {
  if (text === null) return null;
  return (
    <div className="banner banner-error" role="alert">
      {text}{' '}
      <button type="button" className="link-button" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}
