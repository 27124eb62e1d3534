/**
 * A diff's syntax highlighting kept off the scroll's path (issue 26): rows come into view as plain
 * escaped text, and their chunk is highlighted in the browser's idle time, a few chunks a slice,
 * then kept for the diff's life, so a row scrolled back to is highlighted at once. Plain and
 * highlighted rows have the same height (no wrapping), so nothing on screen moves when the colours
 * arrive. A chunk starts its highlighting fresh: a comment opened in an earlier chunk may show
 * plain, never wrong text.
 */
import { escapeForWindow } from '../../../common/display.js';
import { highlightLines, type Line } from '../code/highlight.js';
import type { DiffRow } from '../code/diff-rows.js';

/** Unified rows highlighted together. */
export const CHUNK = 20;
/** A slice stops when the idle period has less left than this (ms), or after this many chunks: its rows are redrawn after it. */
const SLICE_MIN_MS = 4;
const SLICE_CHUNKS = 4;
/** The longest a wanted chunk waits for an idle period (ms) on a page that never has one. */
const IDLE_TIMEOUT_MS = 2_000;

type IdleDeadline = { readonly didTimeout: boolean; timeRemaining(): number };
type Idle = { request(callback: (deadline: IdleDeadline) => void): number; cancel(handle: number): void };

// Chromium (the desktop) has requestIdleCallback; elsewhere (happy-dom) a short timer stands in.
const idle: Idle =
  typeof window.requestIdleCallback === 'function'
    ? { request: (callback) => window.requestIdleCallback(callback, { timeout: IDLE_TIMEOUT_MS }), cancel: (handle) => window.cancelIdleCallback(handle) }
    : { request: (callback) => window.setTimeout(() => callback({ didTimeout: false, timeRemaining: () => 10 }), 1), cancel: (handle) => window.clearTimeout(handle) };

export function chunksOf(first: number, last: number): number[] {
  const chunks: number[] = [];
  for (let chunk = Math.floor(first / CHUNK); chunk <= Math.floor(last / CHUNK); chunk++) chunks.push(chunk);
  return chunks;
}

/** One diff's highlighting in one language; `onDone` hears which chunks a slice finished. */
export class IdleHighlighter {
  private readonly cache = new Map<number, Line[]>();
  private wanted: number[] = [];
  private handle: number | null = null;

  constructor(
    private readonly rows: readonly DiffRow[],
    private readonly language: string | null,
    private readonly onDone: (chunks: ReadonlySet<number>) => void,
  ) {}

  /** Row `index`'s segments: highlighted once its chunk is done, its plain escaped text until then. */
  lineAt(index: number): Line {
    const highlighted = this.cache.get(Math.floor(index / CHUNK))?.[index % CHUNK];
    if (highlighted !== undefined) return highlighted;
    const row = this.rows[index];
    return row === undefined || row.text === '' ? [] : [{ text: escapeForWindow(row.text), className: null }];
  }

  /** Whether unified rows `first` to `last` are all highlighted (an empty range is). */
  done(first: number, last: number): boolean {
    return this.language === null || chunksOf(first, last).every((chunk) => this.cache.has(chunk) || chunk * CHUNK >= this.rows.length);
  }

  /** Highlights the chunks of these unified row ranges (nearest first) in idle time, in place of any asked for before. */
  want(ranges: readonly (readonly [number, number])[]): void {
    this.wanted = [...new Set(ranges.flatMap(([first, last]) => chunksOf(first, last)))].filter((chunk) => !this.cache.has(chunk) && chunk * CHUNK < this.rows.length);
    if (this.wanted.length > 0 && this.language !== null && this.handle === null) this.handle = idle.request(this.slice);
  }

  close(): void {
    if (this.handle !== null) idle.cancel(this.handle);
    this.handle = null;
  }

  private readonly slice = (deadline: IdleDeadline): void => {
    this.handle = null;
    const finished = new Set<number>();
    do {
      const chunk = this.wanted.shift()!;
      const code = this.rows.slice(chunk * CHUNK, (chunk + 1) * CHUNK).map((row) => (row.kind === 'hunk' || row.kind === 'meta' ? '' : escapeForWindow(row.text)));
      this.cache.set(chunk, highlightLines(code.join('\n'), this.language));
      finished.add(chunk);
    } while (this.wanted.length > 0 && finished.size < SLICE_CHUNKS && deadline.timeRemaining() > SLICE_MIN_MS);
    if (this.wanted.length > 0) this.handle = idle.request(this.slice);
    this.onDone(finished);
  };
}
