/**
 * The one display escaper for text that came from a model, a tool or an upstream server, used by
 * the terminal (`ward`), the approval prompts and the desktop timeline alike (P1, U3).
 * Control characters, bidi overrides and isolates, zero-width and invisible characters are shown
 * as `\u{…}` escapes so they can neither reorder, hide nor restyle what the person reads.
 * Shared by both sides: no Node, no Electron.
 */

/** Always escaped: C0/C1 controls except tab and newline, bidi marks, zero-width and invisible characters. */
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
/** Also escaped where text must stay on one line (prompts, summaries). */
const LINE_BREAKS = /[\n\t]/g;

/**
 * ANSI escape sequences (colours, cursor moves, titles) as a terminal would consume them: CSI,
 * OSC (ended by BEL or ST) and two-character escapes.
 */
const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])/g;

const escapeChar = (ch: string): string => `\\u{${ch.codePointAt(0)!.toString(16)}}`;

/** Escapes invisible characters; keeps line breaks and tabs. Unbounded. */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, escapeChar);
}

/** Escapes invisible characters and bounds the length (an ellipsis marks a cut). */
export function escapeForDisplay(text: string, max: number = Number.MAX_SAFE_INTEGER): string {
  const escaped = escapeInvisible(text);
  return escaped.length > max ? `${escaped.slice(0, max - 1)}…` : escaped;
}

/** For one-line places: line breaks and tabs are escaped too, and the length is bounded. */
export function escapeOneLine(text: string, max: number): string {
  return escapeForDisplay(text.replace(LINE_BREAKS, escapeChar), max);
}

/** A run of whitespace this long or longer is shown as a count, so nothing can hide past it. */
const WHITESPACE_RUN = /[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]{3,}/g;

/**
 * A command line shown whole on one line: invisible characters and line breaks escaped, and a
 * whitespace run of three or more shown as `⟨N spaces⟩`, so `ls` followed by 400 spaces and
 * `&& touch x` cannot pass for `ls` (issue 12 #4). Unbounded: the caller decides what is too
 * long to show.
 */
export function showCommand(command: string): string {
  const collapsed = command.replace(WHITESPACE_RUN, (run) => ` ⟨${run.length} ${/^ +$/.test(run) ? 'spaces' : 'blanks'}⟩ `);
  return escapeInvisible(collapsed.replace(LINE_BREAKS, escapeChar));
}

/**
 * For a window, where nothing interprets ANSI: its sequences are dropped (a window would show
 * their ESC as a box), then everything else invisible is escaped. Unbounded; keeps line breaks.
 */
export function escapeForWindow(text: string): string {
  return escapeInvisible(text.replace(ANSI, ''));
}

/** `escapeForWindow` for one-line places (titles, tool names, previews), bounded. */
export function escapeLineForWindow(text: string, max: number): string {
  return escapeOneLine(text.replace(ANSI, ''), max);
}
