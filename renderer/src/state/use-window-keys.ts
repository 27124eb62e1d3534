/** The window's keys: Ctrl/Cmd+K opens the switcher, Ctrl/Cmd+N starts a chat, F6 (Shift+F6 back) moves between the panes. */
import { useEffect } from 'react';

/** The panes F6 cycles through, in order. */
const PANES = ['.rail', '.sidebar', '.vlist, .page, .chat-empty', '.composer textarea'];

/** Focus into the next (or previous) pane: its first control, or the pane itself. */
function movePane(back: boolean): void {
  const panes = PANES.map((selector) => document.querySelector<HTMLElement>(selector)).filter((pane): pane is HTMLElement => pane !== null);
  if (panes.length === 0) return;
  const now = panes.findIndex((pane) => pane.contains(document.activeElement));
  const next = panes[(now + (back ? panes.length - 1 : 1)) % panes.length]!;
  const target = next.matches('textarea, [tabindex]') ? next : (next.querySelector<HTMLElement>('button, [href], input, select, textarea, [tabindex]:not([tabindex="-1"])') ?? next);
  target.focus();
}

export function useWindowKeys(onSwitcher: () => void, onNewChat: () => void): void {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const mod = event.ctrlKey || event.metaKey;
      if (mod && !event.shiftKey && !event.altKey && event.key.toLowerCase() === 'k') {
        event.preventDefault();
        onSwitcher();
      } else if (mod && !event.shiftKey && !event.altKey && event.key.toLowerCase() === 'n') {
        event.preventDefault();
        onNewChat();
      } else if (event.key === 'F6' && document.querySelector('dialog[open]') === null) {
        event.preventDefault();
        movePane(event.shiftKey);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onSwitcher, onNewChat]);
}
