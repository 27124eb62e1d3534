import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import { MAX_SECRET_BYTES, type SecretBackend } from './secret-store.js';

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

function insecure(message: string): WardError {
  return new WardError('credential_store_insecure', `${message}; the file store refuses to use it (fix the owner and mode, or remove it and store the secret again)`);
}

function currentUid(): number {
  if (typeof process.getuid !== 'function') throw new WardError('invalid_config', 'the file credential store is for Linux and macOS; on Windows use the default store');
  return process.getuid();
}

function checkStat(stat: fs.Stats, what: string, mode: number): void {
  const uid = currentUid();
  if (stat.uid !== uid) throw insecure(`${what} is owned by uid ${stat.uid}, not by the current user (uid ${uid})`);
  const actual = stat.mode & 0o777;
  if (actual !== mode) throw insecure(`${what} has mode ${actual.toString(8).padStart(4, '0')}, not ${mode.toString(8).padStart(4, '0')}`);
}

/**
 * The opt-in file store (C2): one 0600 file per entry in a 0700 folder, both owned by the
 * current user. Anything else (another owner, a looser mode, a symlink) is refused, never
 * repaired silently. File names are hashes, so the folder listing reveals no purposes.
 */
export class FileBackend implements SecretBackend {
  readonly kind = 'file';

  constructor(readonly dir: string) {}

  private fileFor(entry: string): string {
    return path.join(this.dir, `${createHash('sha256').update(entry).digest('hex')}.secret`);
  }

  /** Checks the folder; creates it (0700) only when asked and absent. */
  private checkDir(create: boolean): boolean {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (!create) return false;
      fs.mkdirSync(path.dirname(this.dir), { recursive: true, mode: DIR_MODE });
      fs.mkdirSync(this.dir, { mode: DIR_MODE });
      fs.chmodSync(this.dir, DIR_MODE);
      stat = fs.lstatSync(this.dir);
    }
    if (!stat.isDirectory()) throw insecure(`${this.dir} is not a plain folder`);
    checkStat(stat, `the folder ${this.dir}`, DIR_MODE);
    return true;
  }

  /** Opens without following links and checks the open file itself, so a swap in between cannot fool the check. */
  private readChecked(file: string): string | undefined {
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return undefined;
      if (code === 'ELOOP') throw insecure(`${file} is a symbolic link`);
      throw error;
    }
    try {
      const stat = fs.fstatSync(fd);
      if (!stat.isFile()) throw insecure(`${file} is not a regular file`);
      checkStat(stat, `the file ${file}`, FILE_MODE);
      if (stat.size > MAX_SECRET_BYTES) throw insecure(`${file} is larger than ${MAX_SECRET_BYTES} bytes`);
      return fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  }

  async get(entry: string): Promise<string | undefined> {
    if (!this.checkDir(false)) return undefined;
    return this.readChecked(this.fileFor(entry));
  }

  async set(entry: string, secret: string): Promise<void> {
    this.checkDir(true);
    const file = this.fileFor(entry);
    this.readChecked(file); // an existing file with a wrong owner or mode is refused, not overwritten
    const temp = path.join(this.dir, `.${randomBytes(8).toString('hex')}.tmp`);
    const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, FILE_MODE);
    try {
      fs.fchmodSync(fd, FILE_MODE);
      fs.writeFileSync(fd, secret, 'utf8');
      fs.fsyncSync(fd);
    } catch (error) {
      fs.closeSync(fd);
      fs.rmSync(temp, { force: true });
      throw error;
    }
    fs.closeSync(fd);
    fs.renameSync(temp, file);
  }

  /** The folder is the namespace's own, so every file in it is listed; names are hashes, so entries are named by them. */
  async list(prefix: string): Promise<Array<{ entry: string; secret: string }>> {
    if (!this.checkDir(false)) return [];
    const found: Array<{ entry: string; secret: string }> = [];
    for (const name of fs.readdirSync(this.dir)) {
      if (!name.endsWith('.secret')) continue;
      const secret = this.readChecked(path.join(this.dir, name));
      if (secret !== undefined) found.push({ entry: `${prefix}file-${name.slice(0, 12)}`, secret });
    }
    return found;
  }

  async delete(entry: string): Promise<boolean> {
    if (!this.checkDir(false)) return false;
    const file = this.fileFor(entry);
    if (this.readChecked(file) === undefined) return false;
    fs.rmSync(file);
    return true;
  }
}
