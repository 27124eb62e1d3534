/**
 * A diff's syntax highlighting kept off the scroll's path (issue 26): rows come into view as plain
 * escaped text, and their chunk is highlighted in the browser's idle time, a few chunks a slice,
 * then kept for the diff's life, so a row scrolled back to is highlighted at once. Plain and
 * highlighted rows have the same height (no wrapping), so nothing on screen moves when the colours
 * arrive. A chunk starts its highlighting fresh: a comment opened in an earlier chunk may show
 * plain, never wrong text.
 */
import { startTransition, useEffect, useMemo, useState } from 'react';
import { escapeForWindow } from '../../../common/display.js';
import { highlightLines, type Line } from '../code/highlight.js';
import type { DiffRow } from '../code/diff-rows.js';

/** Unified rows highlighted together. */
export const CHUNK = 20;
/** A slice stops when the idle period has less left than this (ms), or after this many chunks: its commit follows. */
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

export interface Highlighter {
  /** Row `index`'s segments: highlighted once its chunk is done, its plain escaped text until then. */
  readonly lineAt: (index: number) => Line;
  /** Whether unified rows `first` to `last` are all highlighted. */
  readonly done: (first: number, last: number) => boolean;
}

function chunksOf(first: number, last: number): number[] {
  const chunks: number[] = [];
  for (let chunk = Math.floor(first / CHUNK); chunk <= Math.floor(last / CHUNK); chunk++) chunks.push(chunk);
  return chunks;
}

/**
 * Highlights the chunks of `wanted` (unified row ranges `first:last`, nearest first, joined by
 * `,`) in idle time; the component re-renders as they are done.
 */
export function useIdleHighlight(rows: readonly DiffRow[], language: string | null, wanted: string): Highlighter {
  // A new cache for each diff or language.
  const cache = useMemo(() => new Map<number, Line[]>(), [rows, language]);
  const [doneCount, setDoneCount] = useState(0);
  useEffect(() => {
    const missing = [...new Set(wanted.split(',').flatMap((range) => (range === '' ? [] : chunksOf(...(range.split(':').map(Number) as [number, number])))))].filter((chunk) => !cache.has(chunk) && chunk * CHUNK < rows.length);
    if (missing.length === 0 || language === null) return;
    const handle = idle.request((deadline) => {
      let count = 0;
      do {
        const chunk = missing.shift()!;
        const code = rows.slice(chunk * CHUNK, (chunk + 1) * CHUNK).map((row) => (row.kind === 'hunk' || row.kind === 'meta' ? '' : escapeForWindow(row.text)));
        cache.set(chunk, highlightLines(code.join('\n'), language));
        count++;
      } while (missing.length > 0 && count < SLICE_CHUNKS && deadline.timeRemaining() > SLICE_MIN_MS);
      // The next slice is asked for by the effect this update runs again.
      startTransition(() => setDoneCount((current) => current + count));
    });
    return () => idle.cancel(handle);
  }, [cache, rows, language, wanted, doneCount]);
  return useMemo(
    () => ({
      lineAt: (index: number) => {
        const highlighted = cache.get(Math.floor(index / CHUNK))?.[index % CHUNK];
        if (highlighted !== undefined) return highlighted;
        const row = rows[index];
        return row === undefined || row.text === '' ? [] : [{ text: escapeForWindow(row.text), className: null }];
      },
      done: (first: number, last: number) => language === null || chunksOf(first, last).every((chunk) => cache.has(chunk) || chunk * CHUNK >= rows.length),
    }),
    [cache, rows, language],
  );
}
