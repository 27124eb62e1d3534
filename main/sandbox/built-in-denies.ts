/**
 * S6: the sandbox runtime's built-in write denies for every folder a run may write: shell and git
 * start-up files (.bashrc, .gitconfig…), editor and agent settings (.vscode, .mcp.json,
 * .claude/commands…), each repository's hooks and config, nested ones found by its ripgrep scan.
 * The runtime computes them for its own working directory, which is Ward's, not the run's: the
 * functions take the folder as an argument since scripts/patch-dependencies.mjs, so the same set
 * is applied without a process.chdir that runs side by side would race.
 *
 * A missing one is denied too: the runtime makes an empty file or folder for it in the person's
 * folder as the mount point of its deny, tracks it, and removes it when no sandbox is left
 * running ("stand-ins" here: the change tracker must not take them for the agent's). It leaves
 * a missing `.git` alone (hooks and config only where `.git` is a folder), so no plain folder
 * looks like a repository and `git init` still works.
 */
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import type { DenyScanCache } from './deny-scan-cache.js';

/** The scan's depth: the runtime's default, which its scan of its own working directory uses too. */
const SCAN_DEPTH = 3;

type Scan = (ripgrep: unknown, depth: number | undefined, allowGitConfig: boolean | undefined, signal: AbortSignal | undefined, folder?: string) => Promise<string[]>;

export interface MandatoryDenies {
  /** Undefined in a runtime without Ward's edit. */
  linuxGetMandatoryDenyPaths?: Scan;
  /** Undefined in a runtime without Ward's edit: the scan the runtime uses for its own working directory. */
  setMandatoryDenyScan?(scan: Scan | undefined): void;
}

export interface BuiltInDenies {
  /** Every path denied, absolute. */
  readonly paths: readonly string[];
  /** Where the runtime stands an empty file or folder in for those missing now, while the run lasts. */
  readonly standIns: readonly string[];
}

/** The module the runtime's manager loads anyway; the scan is exported by Ward's edit. */
export async function linuxUtilities(): Promise<MandatoryDenies> {
  return (await import('@anthropic-ai/sandbox-runtime/dist/sandbox/linux-sandbox-utils.js')) as unknown as MandatoryDenies;
}

/**
 * Linux: the runtime's scan of its own working directory goes through `cache` too (with the
 * runtime's own depth, ripgrep and git setting); null puts back the runtime's scan.
 */
export async function cacheRuntimeScans(cache: DenyScanCache | null): Promise<void> {
  const runtime = await linuxUtilities();
  const scan = runtime.linuxGetMandatoryDenyPaths;
  if (scan === undefined || runtime.setMandatoryDenyScan === undefined) return;
  runtime.setMandatoryDenyScan(
    cache === null
      ? undefined
      : (ripgrep, depth = SCAN_DEPTH, allowGitConfig = false, signal, folder = process.cwd()) =>
          cache.scan(folder, { depth, allowGitConfig, ripgrep }, (scanned) => scan(ripgrep, depth, allowGitConfig, signal, scanned)),
  );
}

/**
 * The built-in denies of each folder in `roots` (what is not a folder has none: a grant may name
 * one file); each folder's scan from `cache` while its tree is unchanged.
 */
export async function builtInDenies(roots: readonly string[], cache: DenyScanCache | null = null): Promise<BuiltInDenies> {
  const scan = (await linuxUtilities()).linuxGetMandatoryDenyPaths;
  if (scan === undefined) {
    throw new WardError('sandbox_unavailable', "the sandbox runtime lacks Ward's install-time edit (scripts/patch-dependencies.mjs, which npm install runs); reinstall Ward's dependencies");
  }
  const scanned = (folder: string) => scan(undefined, SCAN_DEPTH, false, undefined, folder);
  const folders = [...new Set(roots)].filter((root) => fs.statSync(root, { throwIfNoEntry: false })?.isDirectory() === true);
  const found = await Promise.all(folders.map((folder) => (cache === null ? scanned(folder) : cache.scan(folder, { depth: SCAN_DEPTH, allowGitConfig: false, ripgrep: undefined }, scanned))));
  const paths = [...new Set(found.flat())];
  return { paths, standIns: [...new Set(paths.map(firstMissing).filter((missing) => missing !== null))] };
}

/** Where the runtime puts the mount point for a missing path: its first missing component (null: nothing is missing). */
function firstMissing(denied: string): string | null {
  if (exists(denied)) return null;
  let missing = denied;
  while (!exists(path.dirname(missing))) missing = path.dirname(missing);
  return missing;
}

function exists(file: string): boolean {
  return fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined;
}
