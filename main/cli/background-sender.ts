/**
 * How a `ward` process starts the background audit sender (main/app/audit-sender.ts): this same
 * program, `ward audit send --background`, detached (it outlives the turn that started it), with
 * no terminal, at the lowest CPU priority so the next turn keeps the cores.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/**
 * The lowest priority, for the process and, on Linux, for its scheduling group: detached, it leads
 * a session of its own, and with autogroup scheduling (the default on desktop kernels) a session's
 * group competes with the turn's as an equal whatever the process's nice value.
 */
export function lowestPriority(pid: number): void {
  os.setPriority(pid, os.constants.priority.PRIORITY_LOW);
  if (process.platform !== 'linux') return;
  try {
    fs.writeFileSync(`/proc/${pid}/autogroup`, '19');
  } catch {
    // No autogroup scheduling in this kernel: the nice value alone counts.
  }
}

export function startBackgroundSender(env: NodeJS.ProcessEnv): void {
  // This process's own program: bin/ward.js (with the Node flags it was started with).
  const entry = process.argv[1];
  if (entry === undefined) return;
  try {
    const child = spawn(process.execPath, [...process.execArgv, entry, 'audit', 'send', '--background'], { env, detached: true, stdio: 'ignore', windowsHide: true });
    child.on('error', () => undefined);
    if (child.pid !== undefined) lowestPriority(child.pid);
    child.unref();
  } catch {
    // Not started (no process slots, a priority the OS refuses): the backlog stays in the journal for the next turn's sender.
  }
}
