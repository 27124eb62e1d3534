/** The processes under a spawned child (Linux /proc): the sandbox's wrappers stand between Ward and the CLI. */
import fs from 'node:fs';

/**
 * The pid of the process under `rootPid` that runs `binary` (same device and inode as the pinned
 * file), found through /proc; null when it has not started yet or has gone.
 */
export function findInnerProcess(rootPid: number, binary: string, maxDepth = 10): number | null {
  let target: fs.Stats;
  try {
    target = fs.statSync(binary);
  } catch {
    return null;
  }
  let level = [rootPid];
  for (let d = 0; d <= maxDepth && level.length > 0; d += 1) {
    const next: number[] = [];
    for (const pid of level) {
      try {
        const exe = fs.statSync(`/proc/${pid}/exe`);
        if (exe.dev === target.dev && exe.ino === target.ino) return pid;
      } catch {
        // gone, or not ours to read
      }
      next.push(...childrenOf(pid));
    }
    level = next;
  }
  return null;
}

/** The pids of `pid`'s direct children (Linux /proc); empty once it has gone. */
export function childrenOf(pid: number): number[] {
  const found: number[] = [];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (text !== '') found.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return found;
}
