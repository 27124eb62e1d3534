/**
 * A turn starting on a data folder, announced before anything else of the turn (issue 28): while
 * it starts the audit sender sends nothing (the CLI's start is CPU-bound, and on two cores even a
 * low-priority sender's batches showed in the turn's time); once the turn's run is recorded as
 * live, it trickles. Without this the sender saw a turn only from its admission, a few hundred
 * milliseconds in. One file per process (its pid), removed when the process ends its turns.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '../base/process.js';
import { TURNS_STARTING } from './turn-announce.js';

/** A turn's start: the CLI up to its first answer, with room for a loaded machine. */
const STARTING_MS = 10_000;
/** A file left by a process that died (kill -9) is removed once this old. */
const LEFT_BEHIND_MS = 60 * 60_000;

/** Whether a turn of a live process was announced in the last few seconds and has not ended. */
export function turnStarting(home: string, now = Date.now()): boolean {
  const folder = path.join(home, TURNS_STARTING);
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return false;
  }
  let starting = false;
  for (const name of names) {
    const file = path.join(folder, name);
    try {
      const age = now - fs.statSync(file).mtimeMs;
      if (age < STARTING_MS && isProcessAlive(Number(name))) starting = true;
      else if (age > LEFT_BEHIND_MS) fs.rmSync(file, { force: true });
    } catch {
      // Removed meanwhile: that turn ended.
    }
  }
  return starting;
}

/**
 * When a `ward run` of this data folder last started or ended a turn (ms since the epoch; 0 when
 * none did): the announcements' folder changes at both, so its mtime says it for every process.
 */
export function lastTurnActivity(home: string): number {
  try {
    return fs.statSync(path.join(home, TURNS_STARTING)).mtimeMs;
  } catch {
    return 0;
  }
}
