/**
 * B2: per run a private 0700 temp folder holding the 0600 mcp.json (the only place the run's
 * broker capability is written, when the agent has MCP tools) and the agent's instructions. Removed when the child exits, and by
 * the run's `finally` after a crash; folders left by a Ward process that died are swept at the
 * next start.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WARD_SERVER } from './argv.js';

export const RUN_DIR_PREFIX = 'ward-run-';
const OWNER_FILE = 'owner.pid';
const CHILD_FILE = 'child.pid';

export interface RunDir {
  readonly dir: string;
  readonly mcpConfigPath: string;
  readonly instructionsPath: string;
  /** Notes the CLI's pid, so a sweep after a Ward crash can end the orphaned child. */
  recordChild(pid: number): void;
  remove(): void;
}

/** `broker`: the run's MCP server, when the agent has tools for it (none: an mcp.json with no server). */
export function createRunDir(input: { broker: { readonly url: string; readonly capability: string } | null; instructions: string; tmpRoot?: string }): RunDir {
  const dir = fs.mkdtempSync(path.join(input.tmpRoot ?? os.tmpdir(), RUN_DIR_PREFIX));
  fs.chmodSync(dir, 0o700);
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    const mcpConfigPath = path.join(dir, 'mcp.json');
    const instructionsPath = path.join(dir, 'instructions.md');
    const { broker } = input;
    const config = { mcpServers: broker === null ? {} : { [WARD_SERVER]: { type: 'http', url: broker.url, headers: { Authorization: `Bearer ${broker.capability}` } } } };
    // `wx`: never follow or reuse a file someone else placed in the folder.
    fs.writeFileSync(mcpConfigPath, JSON.stringify(config), { mode: 0o600, flag: 'wx' });
    fs.writeFileSync(instructionsPath, input.instructions, { mode: 0o600, flag: 'wx' });
    fs.writeFileSync(path.join(dir, OWNER_FILE), String(process.pid), { mode: 0o600, flag: 'wx' });
    const recordChild = (pid: number) => fs.writeFileSync(path.join(dir, CHILD_FILE), String(pid), { mode: 0o600, flag: 'wx' });
    return { dir, mcpConfigPath, instructionsPath, recordChild, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** Removes run folders whose owning Ward process is gone (a SIGKILLed Ward cannot clean up). */
export function sweepStaleRunDirs(isAlive: (pid: number) => boolean, tmpRoot: string = os.tmpdir()): string[] {
  const removed: string[] = [];
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(tmpRoot, { withFileTypes: true });
  } catch {
    return removed;
  }
  for (const entry of entries) {
    if (!entry.isDirectory() || !entry.name.startsWith(RUN_DIR_PREFIX)) continue;
    const dir = path.join(tmpRoot, entry.name);
    try {
      const stat = fs.statSync(dir);
      if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) continue;
      const pid = Number(fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && !isAlive(pid)) {
        killOrphanedChild(dir);
        fs.rmSync(dir, { recursive: true, force: true });
        removed.push(dir);
      }
    } catch {
      // Not ours or half-made: leave it.
    }
  }
  return removed;
}

/**
 * The CLI of a crashed Ward keeps running in its own process group. It is killed only when its
 * command line still names this run folder (Linux /proc), so a reused pid is never hit.
 */
function killOrphanedChild(dir: string): void {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(path.join(dir, CHILD_FILE), 'utf8'));
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir)) return;
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone already, or no /proc on this OS
  }
}
