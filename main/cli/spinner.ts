import type { Writable } from 'node:stream';
import { TerminalGuard } from './terminal-guard.js';

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const FRAME_MS = 100;

/** A "⠋ checking …" line redrawn in place while something slow runs; lines printed meanwhile go above it. */
export interface Spinner {
  show(text: string): void;
  /** Erases the line (before a line is printed, and at the end); `show` brings it back. */
  clear(): void;
}

/**
 * A spinner on `stream` when it is a terminal; on a pipe or a file, nothing (plain lines only).
 * It draws only once `stream` and `alongside` (stdout, on the same terminal) have written out
 * what is queued: a line still on its way must not land after the spinner.
 */
export function spinnerOn(stream: Writable, alongside: readonly Writable[]): Spinner | null {
  if (!(stream instanceof TerminalGuard) || !stream.isTTY) return null;
  let text: string | null = null;
  let frame = 0;
  let timer: NodeJS.Timeout | undefined;
  let waiting = false;
  const draw = () => {
    if (text === null || waiting) return;
    if ([stream, ...alongside].some((queued) => queued.writableLength > 0)) {
      waiting = true;
      setImmediate(() => {
        waiting = false;
        draw();
      }).unref();
    } else stream.status(`${FRAMES[frame++ % FRAMES.length]} ${text}`);
  };
  return {
    show(next) {
      text = next;
      draw();
      // unref: a spinner never keeps `ward` alive.
      timer ??= setInterval(draw, FRAME_MS).unref();
    },
    clear() {
      clearInterval(timer);
      timer = undefined;
      if (text !== null) stream.status(null);
      text = null;
    },
  };
}
