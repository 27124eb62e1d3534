/**
 * A `ward run`'s side of the turn signal (./turn-signal.ts): one file per process, named by its
 * pid, written before anything else of the turn loads. Only `fs` and `path`: the program's entry
 * imports this before its commands, so what it imports delays the announcement.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The data folder's folder of announcements. */
export const TURNS_STARTING = 'turns-starting';

/** Says a turn of this process is starting; returns how to say it ended (best effort: a data folder not made yet has no sender to tell). */
export function announceTurn(home: string): () => void {
  const file = path.join(home, TURNS_STARTING, String(process.pid));
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    fs.writeFileSync(file, '', { mode: 0o600 });
  } catch {
    return () => undefined;
  }
  return () => fs.rmSync(file, { force: true });
}
