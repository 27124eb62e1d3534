/**
 * Where the `ward` service listens and how a client proves it is the same user (issue 29).
 *
 * One service per user and data folder: its socket is in a folder only that user may enter, mode
 * 0700, checked to be theirs and not a link before every use, inside the login session's runtime
 * folder ($XDG_RUNTIME_DIR), which is removed at logout: the service sees its socket gone and
 * exits, so it never outlives the session. Without one (no login session: cron, containers, CI;
 * macOS and Windows for now) there is no service and each `ward run` runs its turn itself. Node cannot read a Unix socket peer's uid
 * (SO_PEERCRED), so the peer proves it instead: its first message carries the token the service
 * wrote beside the socket, mode 0600, which only that user can read.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { WardError } from '../../base/errors.js';
import { wardVersion } from '../../app/version.js';

export interface ServicePlace {
  readonly dir: string;
  readonly socket: string;
  readonly tokenFile: string;
  /** Left by a service the admin policy refused: clients run in-process without starting one, for POLICY_RECHECK_MS. */
  readonly policyMarker: string;
}

/** How long a refusal by the admin policy is taken as still true before a client asks a new service again. */
const POLICY_RECHECK_MS = 60 * 60_000;
const MAX_MARKER_BYTES = 4_096;

const TOKEN_BYTES = 32;

/** The service of this user and data folder; null without a login session's runtime folder. */
export function servicePlace(env: NodeJS.ProcessEnv, home: string): ServicePlace | null {
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime === undefined || !path.isAbsolute(runtime) || process.platform === 'win32') return null;
  const uid = process.getuid?.() ?? 0;
  const dir = path.join(runtime, `ward-${uid}-${createHash('sha256').update(path.resolve(home)).digest('hex').slice(0, 16)}`);
  return { dir, socket: path.join(dir, 'service.sock'), tokenFile: path.join(dir, 'token'), policyMarker: path.join(dir, 'off-by-policy') };
}

/**
 * The folder, made if missing; refused unless it is a real folder of this user that no one else
 * may enter (a folder someone else made first in a shared temp folder is never used).
 */
export function privateFolder(place: ServicePlace, create: boolean): void {
  if (create) {
    try {
      fs.mkdirSync(place.dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const stat = fs.lstatSync(place.dir);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    throw new WardError('invalid_config', `${place.dir} is not a folder only you can enter (mode 0700, yours); Ward will not use it for its background service: remove it`);
  }
}

/** A new token, written 0600 (replacing any left by a service that died). */
export function writeToken(place: ServicePlace): Buffer {
  const token = randomBytes(TOKEN_BYTES);
  const temporary = `${place.tokenFile}.${process.pid}`;
  fs.rmSync(temporary, { force: true });
  fs.writeFileSync(temporary, token.toString('hex'), { mode: 0o600, flag: 'wx' });
  fs.renameSync(temporary, place.tokenFile);
  return token;
}

/** The token a client presents; undefined when there is none to read. */
export function readToken(place: ServicePlace): string | undefined {
  try {
    return fs.readFileSync(place.tokenFile, 'utf8').slice(0, TOKEN_BYTES * 2);
  } catch {
    return undefined;
  }
}

export function markOffByPolicy(place: ServicePlace, reason: string): void {
  fs.writeFileSync(place.policyMarker, reason.slice(0, MAX_MARKER_BYTES), { mode: 0o600 });
}

/** The admin policy's refusal a service left within the last hour, else null (an older one is removed). */
export function offByPolicy(place: ServicePlace): string | null {
  try {
    if (Date.now() - fs.statSync(place.policyMarker).mtimeMs > POLICY_RECHECK_MS) {
      fs.rmSync(place.policyMarker, { force: true });
      return null;
    }
    return fs.readFileSync(place.policyMarker, 'utf8').slice(0, MAX_MARKER_BYTES);
  } catch {
    return null;
  }
}

export function tokenMatches(expected: Buffer, presented: unknown): boolean {
  if (typeof presented !== 'string' || !/^[0-9a-f]+$/.test(presented)) return false;
  const given = Buffer.from(presented, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Which build of Ward this is: a service started by an older build (Ward updated or rebuilt since)
 * must not run a newer client's turns. The folder of the built code changes with each build.
 */
export function buildIdentity(): string {
  const folder = path.dirname(fileURLToPath(import.meta.url));
  return `${wardVersion()}:${fs.statSync(folder).mtimeMs}`;
}

/** Variables that differ between two terminals of one person and change nothing a turn does. */
const PER_TERMINAL = new Set([
  ...['PWD', 'OLDPWD', 'SHLVL', '_', 'COLUMNS', 'LINES', 'WINDOWID', 'TERM_SESSION_ID', 'SSH_TTY', 'GPG_TTY', 'STY', 'WT_SESSION'],
  // Terminal emulators and multiplexers name the tab or pane.
  ...['GNOME_TERMINAL_SCREEN', 'KONSOLE_DBUS_SESSION', 'KONSOLE_DBUS_WINDOW', 'ITERM_SESSION_ID', 'KITTY_WINDOW_ID', 'ALACRITTY_WINDOW_ID', 'WEZTERM_PANE', 'TMUX_PANE'],
]);

/**
 * The environment a service runs turns with, as one digest: a client whose environment differs
 * (another key, model, proxy, allowlisted variable) runs its turn itself rather than in a service
 * that would use the other one. Never sent or stored as values: only this digest travels.
 */
export function environmentDigest(env: NodeJS.ProcessEnv): string {
  const entries = Object.entries(env)
    .filter(([name, value]) => value !== undefined && !PER_TERMINAL.has(name) && name !== 'WARD_SERVICE')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash('sha256').update(JSON.stringify(entries)).digest('hex');
}
