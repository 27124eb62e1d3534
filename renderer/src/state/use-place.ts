/** Where the window is (namespace, page, chat), kept across a reload, and the window title that names it. */
import { useCallback, useEffect, useState } from 'react';
import type { NamespaceView } from '../../../common/views.js';
import { PAGES, type Page } from '../pages.js';

/** `conversationId` "new" is a chat not started yet. */
export interface Place {
  readonly namespace: string;
  readonly page: Page;
  readonly conversationId: string | null;
}

export type Go = (next: Partial<Place>) => void;

const PLACE_KEY = 'ward.place';

/** Where the person was, so a reload reopens the same conversation (and replays it). */
function loadPlace(): Place {
  try {
    const saved = JSON.parse(sessionStorage.getItem(PLACE_KEY) ?? 'null') as Partial<Place> | null;
    if (saved !== null && typeof saved.namespace === 'string' && PAGES.some((page) => page.id === saved.page)) {
      return { namespace: saved.namespace, page: saved.page as Page, conversationId: typeof saved.conversationId === 'string' ? saved.conversationId : null };
    }
  } catch {
    // A damaged entry just means starting fresh.
  }
  return { namespace: 'default', page: 'chats', conversationId: null };
}

/** The place, and `go` to move; a saved place in a namespace this Ward does not offer (fixed by policy) moves to one it does. */
export function usePlace(namespaces: readonly NamespaceView[]): readonly [Place, Go] {
  const [place, setPlace] = useState<Place>(loadPlace);
  const go = useCallback<Go>((next) => setPlace((current) => ({ ...current, ...next })), []);
  useEffect(() => sessionStorage.setItem(PLACE_KEY, JSON.stringify(place)), [place]);
  useEffect(() => {
    setPlace((current) => (namespaces.length > 0 && !namespaces.some((ns) => ns.name === current.namespace) ? { ...current, namespace: namespaces[0]!.name, conversationId: null } : current));
  }, [namespaces]);
  useEffect(() => {
    const onRequest = (event: Event) => go({ page: (event as CustomEvent<Page>).detail });
    window.addEventListener(OPEN_PAGE, onRequest);
    return () => window.removeEventListener(OPEN_PAGE, onRequest);
  }, [go]);
  return [place, go];
}

const OPEN_PAGE = 'ward:open-page';

/** Opens a page from anywhere (an error's "Open Connections" button). */
export function openPage(page: Page): void {
  window.dispatchEvent(new CustomEvent(OPEN_PAGE, { detail: page }));
}

/** The window title names the chat (or the page); the chat says its title with the setter returned. */
export function useWindowTitle(place: Place): (chatTitle: string) => void {
  const [chatTitle, setChatTitle] = useState<string | null>(null);
  const pageLabel = PAGES.find((page) => page.id === place.page)!.label;
  const windowTitle = place.page !== 'chats' ? pageLabel : place.conversationId === 'new' ? 'New chat' : place.conversationId === null ? 'Chats' : (chatTitle ?? 'Chat');
  useEffect(() => {
    document.title = `${windowTitle} — Ward`;
  }, [windowTitle]);
  return setChatTitle;
}

/** Starts a chat: a blank one each time (`key` changes), on the Chats page. */
export function useNewChat(go: Go): readonly [number, () => void] {
  const [key, setKey] = useState(0);
  const newChat = useCallback(() => {
    setKey((current) => current + 1);
    go({ page: 'chats', conversationId: 'new' });
  }, [go]);
  return [key, newChat];
}

/** The sessions pane below 1000 px: toggled from the rail; opening a chat from it folds it away (it covers the chat). */
export function useSessionsPane(go: Go): { readonly open: boolean; readonly toggle: () => void; readonly openChat: (conversationId: string) => void } {
  const [open, setOpen] = useState(false);
  const openChat = (conversationId: string): void => {
    setOpen(false);
    go({ page: 'chats', conversationId });
  };
  return { open, toggle: () => setOpen(!open), openChat };
}
