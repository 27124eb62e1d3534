import { useMemo, useState } from 'react';
import { MODEL_SETUP_NEEDED } from '../../../common/model-setup.js';
import { errorText } from '../api.js';
import { placeOfError } from '../../../common/desktop-errors.js';
import { openSetup } from '../state/use-model-setup.js';
import { openPage } from '../state/use-place.js';
import { PAGES } from '../pages.js';

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
      <ErrorAction text={notice.text} />
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
      {text}
      <ErrorAction text={text} />{' '}
      <button type="button" className="link-button" onClick={onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

/** An error's way out, never a terminal command: the setup card for no key, else the page the text names. */
function ErrorAction({ text }: { readonly text: string }) {
  if (text === MODEL_SETUP_NEEDED) {
    return (
      <button type="button" className="primary setup-button" onClick={openSetup}>
        Set up the model
      </button>
    );
  }
  const place = placeOfError(text);
  if (place === null) return null;
  return (
    <button type="button" className="primary setup-button" onClick={() => openPage(place)}>
      Open {PAGES.find((page) => page.id === place)!.label}
    </button>
  );
}
