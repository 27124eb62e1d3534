import type { JournalEvent } from '../store/journal.js';

const MAX_SUMMARY = 200;

/** Control, bidi and zero-width characters are shown escaped so a terminal cannot be tricked. */
export function escapeForTerminal(text: string, max = MAX_SUMMARY): string {
  const escaped = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/g, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`);
  return escaped.length > max ? `${escaped.slice(0, max - 1)}…` : escaped;
}

/** One human line per journal event: `#seq time type summary`. */
export function formatEvent(event: JournalEvent): string {
  const time = event.createdAt.slice(11, 23);
  const payload = event.payload as Record<string, unknown> | null;
  const text = typeof payload?.text === 'string' ? payload.text : JSON.stringify(payload);
  return `#${event.seq} ${time} ${event.type}  ${escapeForTerminal(text ?? 'null').replace(/\n/g, '\\n')}`;
}
