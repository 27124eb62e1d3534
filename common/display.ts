/**
 * The one display escaper for text that came from a model, a tool or an upstream server, used by
 * the terminal (`ward`), the approval prompts and the desktop timeline alike (P1, U3).
 * Control characters, bidi overrides and isolates, zero-width and invisible characters are shown
 * as `\u{…}` escapes so they can neither reorder, hide nor restyle what the person reads.
 * Shared by both sides: no Node, no Electron.
 */

/**
 * Always escaped: C0/C1 controls except tab and newline, line and paragraph separators, bidi
 * marks, every default-ignorable code point (zero-width characters, variation selectors, tag
 * characters U+E0000–E0FFF, Hangul fillers…) and the blank-rendering Braille pattern U+2800.
 * The one exception is a single U+FE0F right after an emoji, so ordinary emoji still render;
 * a run of selectors (a way to smuggle hidden data) is escaped whole. `u`: astral code points.
 */
const INVISIBLE =
  /(?<=\p{Extended_Pictographic})(\uFE0F)(?![\uFE00-\uFE0F\u{E0100}-\u{E01EF}])|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u2800\p{Default_Ignorable_Code_Point}]/gu;
/**
 * Three or more blank-rendering characters, at least one of them not an ASCII space (no-break
 * and typographic spaces, Braille blanks, Hangul fillers), are shown as a count: padding cannot
 * push text out of sight, and 400 fillers are not 400 marks. Plain spaces are the text's own.
 */
const BLANK_RUN = /(?=[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800\u115f\u1160\u3164\uffa0]*[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800\u115f\u1160\u3164\uffa0])[ \u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800\u115f\u1160\u3164\uffa0]{3,}/gu;
/** Also escaped where text must stay on one line (prompts, summaries). */
const LINE_BREAKS = /[\n\t]/g;

/**
 * ANSI escape sequences (colours, cursor moves, titles) as a terminal would consume them: CSI,
 * OSC (ended by BEL or ST) and two-character escapes.
 */
const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|[@-Z\\-_])/g;

const escapeChar = (ch: string): string => `\\u{${ch.codePointAt(0)!.toString(16)}}`;

/** Escapes invisible characters, and nothing else; keeps line breaks and tabs. Unbounded. */
export function markInvisible(text: string): string {
  return text.replace(INVISIBLE, (ch: string, emojiSelector: string | undefined) => emojiSelector ?? escapeChar(ch));
}

/**
 * Printable ASCII, tabs and line breaks: text neither pattern above can match (both need a control
 * or a non-ASCII character). Most text is so, and one test of it is far cheaper than the two
 * Unicode-property scans (a 100,000-event transcript's escaping, issue 27).
 */
const PLAIN = /^[\t\n\x20-\x7e]*$/;

/** Escapes invisible characters and counts runs of blanks; keeps line breaks and tabs. Unbounded. */
export function escapeInvisible(text: string): string {
  if (PLAIN.test(text)) return text;
  return markInvisible(text.replace(BLANK_RUN, (run) => ` ⟨${[...run].length} blanks⟩ `));
}

/** Every UTF-16 unit as a JSON `\uXXXX` escape (an astral code point becomes its surrogate pair). */
const jsonEscape = (ch: string): string => Array.from({ length: ch.length }, (_, index) => `\\u${ch.charCodeAt(index).toString(16).padStart(4, '0')}`).join('');

/**
 * JSON text (as `JSON.stringify` writes it) with every invisible character written as a `\uXXXX`
 * escape: the same value for a machine, nothing a terminal would act on for a person.
 */
export function escapeInvisibleInJson(json: string): string {
  return json.replace(INVISIBLE, (ch: string) => jsonEscape(ch));
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
 * `showCommand` bounded, for the one-line summary of a tool's arguments in an approval (the
 * desktop's card and the terminal's prompt alike): padding inside an argument shows as a count.
 */
export function showArguments(text: string, max: number): string {
  const shown = showCommand(text);
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
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
