/**
 * A turn starting on a data folder, announced by touching a file before anything else of the
 * turn (issue 28): the audit sender sees a turn in the runs table only from its admission, a
 * few hundred milliseconds in, and until then sent full batches beside the CLI's start.
 */
import fs from 'node:fs';
import path from 'node:path';

const FILE = 'turn-starting';
/** Long enough to cover a turn's start up to its admission, however loaded the machine. */
const STARTING_MS = 10_000;

/** Says a turn is starting (best effort: a data folder not made yet has no sender to tell). */
export function announceTurn(home: string): void {
  const file = path.join(home, FILE);
  const now = new Date();
  try {
    fs.utimesSync(file, now, now);
  } catch {
    try {
      fs.writeFileSync(file, '', { mode: 0o600 });
    } catch {
      // No data folder yet.
    }
  }
}

/** Whether a turn was announced in the last few seconds. */
export function turnStarting(home: string, now = Date.now()): boolean {
  try {
    return now - fs.statSync(path.join(home, FILE)).mtimeMs < STARTING_MS;
  } catch {
    return false;
  }
}
