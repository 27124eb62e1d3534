/** Whether a process Ward recorded (the owner of a run, a server it started) is still that process. */
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from './errors.js';
import { shown } from './host-pattern.js';

/** Whether the process that owns a run still runs: same pid and, where known, same start time. */
export type ProcessAlive = (pid: number, identity: string | null) => boolean;

/** A process's start time in clock ticks since boot (Linux /proc), or null where the OS does not say. */
export function processIdentity(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses; starttime is field 22.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

function isZombie(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

export function isProcessAlive(pid: number, identity: string | null = null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A zombie has ended; only its exit status waits to be collected (a killed `ward` service whose parent, init, is slow to reap it).
  if (isZombie(pid)) return false;
  if (identity === null) return true;
  const now = processIdentity(pid);
  return now === null || now === identity;
}

let setprivFound: string | null | undefined;

/**
 * Linux: the argv prefix that makes a program die with the process that starts it (setpriv sets
 * the parent-death signal, then execs it: no process stays in between). Null where that cannot be
 * done, and the caller falls back to killing what it started on exit.
 */
export function diesWithParentPrefix(): readonly string[] | null {
  if (process.platform !== 'linux') return null;
  setprivFound ??= ['/usr/bin/setpriv', '/bin/setpriv'].find((candidate) => fs.existsSync(candidate)) ?? null;
  return setprivFound === null ? null : [setprivFound, '--pdeathsig', 'KILL', '--'];
}

/** Whether `command` names an executable file, as spawn would find it (a path, or a name on `PATH`). */
export function isExecutable(command: string, searchPath: string | undefined): boolean {
  return findExecutable(command, searchPath) !== null;
}

/** The executable file `command` names, as spawn would find it (a path, or the first match on `PATH`), or null. */
export function findExecutable(command: string, searchPath: string | undefined): string | null {
  const candidates = command.includes('/') ? [command] : (searchPath ?? '').split(':').filter((dir) => dir.startsWith('/')).map((dir) => `${dir}/${command}`);
  return (
    candidates.find((candidate) => {
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return fs.statSync(candidate).isFile();
      } catch {
        return false;
      }
    }) ?? null
  );
}

/** A relative path as a person types it for a server: ./x, ../x, or dir/x that exists (never an option, URL or bare name). */
function isRelativePath(value: string, cwd: string): boolean {
  if (value === '' || value.startsWith('-') || path.isAbsolute(value) || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value)) return false;
  if (/^\.\.?[/\\]/.test(value)) return true;
  return /[/\\]/.test(value) && fs.existsSync(path.resolve(cwd, value));
}

/**
 * A server's command and arguments with relative paths made absolute against `cwd`, where the
 * person typed them: the server is started later from wherever Ward runs then.
 */
export function absolutePaths(command: string, args: readonly string[], cwd: string): { command: string; args: string[] } {
  const absolute = (value: string) => (isRelativePath(value, cwd) ? path.resolve(cwd, value) : value);
  return { command: absolute(command), args: args.map(absolute) };
}

/**
 * A path as typed in the desktop, which has no working folder: `~` and `~/…` are the home folder
 * (no shell expands them there), and a path relative to nothing (`./x`, `../x`) is refused by
 * name, rather than resolved against wherever Ward happens to run. Anything else is kept as typed.
 */
export function desktopPath(value: string, what: string, home: string): string {
  if (value === '~' || value.startsWith('~/')) return path.join(home, value.slice(1));
  if (/^\.\.?[/\\]/.test(value)) throw new WardError('usage', `${what} ${shown(value)} is a relative path and the desktop has no folder to resolve it in: give its full path (like ${path.join(home, 'server.js')})`);
  return value;
}

/** A server's command and arguments as typed in the desktop (desktopPath for each). */
export function desktopServerPaths(command: string, args: readonly string[], home: string): { command: string; args: string[] } {
  return { command: desktopPath(command, 'the program', home), args: args.map((arg, index) => desktopPath(arg, `argument ${index + 1}`, home)) };
}
