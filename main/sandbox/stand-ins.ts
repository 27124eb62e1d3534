/**
 * The runtime removes its stand-ins (./built-in-denies.ts) when the last sandbox of the process
 * ends, and when the process exits. A Ward killed outright (SIGKILL, a crash, power loss) leaves
 * them in the person's folders: empty .bashrc, .mcp.json, a `.vscode` that is a file, and every
 * later run takes them for the person's own and keeps them. So each launch's stand-ins are
 * written down before it starts and the note goes when the launch is released; notes of a Ward
 * process that is gone are the next one's to clean up, removing each stand-in that is still an
 * empty file or an empty folder (anything with content is someone's and stays).
 */
import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive, processIdentity } from '../base/process.js';

interface Note {
  readonly pid: number;
  readonly identity: string | null;
  readonly standIns: readonly string[];
}

export class StandInNotes {
  /** This process's launches with a note. */
  private readonly noted = new Set<string>();
  private swept = false;

  constructor(private readonly dir: string) {}

  /** Before a launch: what the runtime may make in the person's folders for it (the first one cleans up after dead processes). */
  launching(launchId: string, standIns: readonly string[]): void {
    this.sweepOnce();
    if (standIns.length === 0) return;
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const note: Note = { pid: process.pid, identity: processIdentity(process.pid), standIns };
    fs.writeFileSync(this.file(launchId), JSON.stringify(note), { mode: 0o600 });
    this.noted.add(launchId);
  }

  /** No sandbox of this process is left, so the runtime has removed its stand-ins. */
  allReleased(): void {
    for (const launchId of this.noted) fs.rmSync(this.file(launchId), { force: true });
    this.noted.clear();
  }

  /**
   * The first time: `sweep`. Called before a launch's built-in denies are worked out, so a stand-in a
   * killed process left is gone by then, not taken for the person's file and removed under the run.
   */
  sweepOnce(): void {
    if (!this.swept) this.sweep();
    this.swept = true;
  }

  /** Removes what launches of Ward processes that are gone left behind, and their notes. */
  sweep(): void {
    let names: string[];
    try {
      names = fs.readdirSync(this.dir);
    } catch {
      return; // no note yet
    }
    for (const name of names) {
      const file = path.join(this.dir, name);
      let note: Note;
      try {
        note = JSON.parse(fs.readFileSync(file, 'utf8')) as Note;
      } catch {
        fs.rmSync(file, { force: true }); // cut short while written: its launch had not started
        continue;
      }
      if (note.pid === process.pid || isProcessAlive(note.pid, note.identity)) continue;
      // Deepest first: a folder goes only once what was made inside it has gone.
      for (const standIn of [...note.standIns].sort((a, b) => b.length - a.length)) removeIfEmpty(standIn);
      fs.rmSync(file, { force: true });
    }
  }

  private file(launchId: string): string {
    return path.join(this.dir, `${launchId}.json`);
  }
}

function removeIfEmpty(standIn: string): void {
  try {
    const stat = fs.lstatSync(standIn);
    if (stat.isFile() && stat.size === 0) fs.unlinkSync(standIn);
    else if (stat.isDirectory()) fs.rmdirSync(standIn); // only an empty one
  } catch {
    // gone, not empty, or not ours to remove: left as it is
  }
}
