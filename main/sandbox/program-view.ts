/**
 * S2, S5: how a sandbox shows the files a program needs to start (its binary, the script an
 * interpreter runs). Their folder is shown when it is narrow enough; a folder that is or holds the
 * home folder or Ward's data folder never is (a script in the home folder would bring the SSH keys
 * with it): then the file alone is shown. And the runtime's network bridge, started through a
 * wrapper that dies with Ward.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WardError } from '../base/errors.js';
import { within } from './files.js';

/** What a sandbox never shows whole, nor any folder above it: Ward's data folder and the home folder. */
export interface GuardedFolders {
  readonly wardHome: string;
  readonly homes: readonly string[];
}

/** Ward's data folder and the home folder (the environment's and the account's), as the file system resolves them. */
export function guardedFolders(wardHome: string, env: NodeJS.ProcessEnv, accountHome: string): GuardedFolders {
  const real = (folder: string) => (fs.existsSync(folder) ? fs.realpathSync(folder) : path.resolve(folder));
  const homes = [env.HOME, accountHome].filter((home): home is string => home !== undefined && path.isAbsolute(home));
  return { wardHome: real(wardHome), homes: [...new Set(homes.map(real))] };
}

/**
 * The folder of `file` (absolute, resolved), or `file` itself when that folder is or holds a
 * guarded folder. A file inside Ward's data folder is refused: nothing of it is ever shown.
 */
export function fileOrItsFolder(file: string, guarded: GuardedFolders): string {
  if (within(file, guarded.wardHome)) {
    throw new WardError('invalid_config', `${file} is inside Ward's data folder (${guarded.wardHome}), which no sandboxed program may see; move the program out of it`);
  }
  const folder = path.dirname(file);
  return [guarded.wardHome, ...guarded.homes].some((kept) => within(kept, folder)) ? file : folder;
}

const SOCAT_SHIM = path.join('native-helpers', 'linux', 'socat-dies-with-parent');

/**
 * Linux: the runtime's network bridge started through a wrapper that sets the parent-death
 * signal, so a SIGKILLed Ward leaves no bridge behind; null where that cannot be done here.
 */
export function socatThatDiesWithWard(): string | null {
  if (process.platform !== 'linux' || !onPath('setpriv')) return null;
  // Ward's own files sit a few folders above this module, in the source tree and in dist/ alike.
  for (let dir = path.dirname(fileURLToPath(import.meta.url)), up = 0; up < 6; dir = path.dirname(dir), up++) {
    const candidate = path.join(dir, SOCAT_SHIM);
    if (fs.existsSync(candidate)) return candidate;
  }
  return null;
}

function onPath(name: string): boolean {
  return (process.env.PATH ?? '').split(path.delimiter).some((dir) => path.isAbsolute(dir) && fs.existsSync(path.join(dir, name)));
}
