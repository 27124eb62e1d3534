/**
 * S2: what a run's processes see of the file system, as data. The same view is written as the
 * sandbox runtime's filesystem config (every OS) and answers "can the child reach this path?"
 * for Ward's answers to the CLI's permission questions. Pure: no I/O, so it is tested on its output for macOS and Windows too.
 *
 * The view: the system read-only, the program folders (the CLI, the runtime's helpers) and the
 * run folder read-only, the workspace, the conversation's CLI state and a private home and tmp
 * read-write, granted paths as granted, and nothing else: never Ward's data folder (even when a
 * grant or the workspace covers it), other conversations or namespaces, the keyring or D-Bus
 * sockets, the home folder.
 */
import path from 'node:path';
import { WardError } from '../base/errors.js';
import type { Rule } from '../permissions/grants.js';

/** The file-system part of the run's rules, as the sandbox mirrors them. */
export interface SandboxGrants {
  readonly read: readonly string[];
  readonly write: readonly string[];
  readonly denyRead: readonly string[];
  readonly denyWrite: readonly string[];
}

export interface RunFiles {
  /** Folders (or, where a folder would show too much, the files) of programs the run executes: read-only. */
  readonly programs: readonly string[];
  /** The run folder (mcp.json, instructions): read-only. */
  readonly readOnly: readonly string[];
  /** The workspace, the conversation's CLI state folder, the private home and tmp. */
  readonly writable: readonly string[];
  readonly grants: SandboxGrants;
  /** Never visible, whatever covers them: Ward's data folder, keyring and D-Bus sockets. */
  readonly hidden: readonly string[];
}

/** What no sandboxed process may see, whatever covers it: Ward's data folder, the keyring and D-Bus sockets (S2). */
export function wardPrivatePaths(wardHome: string, env: NodeJS.ProcessEnv): string[] {
  return [wardHome, '/run/user', '/run/dbus', path.join(env.HOME ?? '/nonexistent', '.local', 'share', 'keyrings')];
}

export const NO_GRANTS: SandboxGrants = { read: [], write: [], denyRead: [], denyWrite: [] };

/** The runtime's filesystem settings (the part of its SandboxRuntimeConfig Ward sets per run). */
export interface FilesystemView {
  readonly denyRead: string[];
  readonly allowRead: string[];
  readonly allowWrite: string[];
  readonly denyWrite: string[];
}

export type SandboxPlatform = 'linux' | 'darwin' | 'win32';

/** Read-only system folders a shell and the CLI need, per OS (the rest of `/` stays hidden). */
const SYSTEM_READ: Record<SandboxPlatform, readonly string[]> = {
  linux: ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'],
  darwin: ['/usr', '/bin', '/sbin', '/System', '/Library/Apple', '/private/var/db/timezone', '/dev'],
  // The sandbox user of the Windows runtime reads the system folders by its own rights.
  win32: [],
};

/** Only what name resolution, TLS, users and the dynamic loader read from /etc. */
const ETC_READ = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'nsswitch.conf',
  'passwd',
  'group',
  'hosts',
  'host.conf',
  'resolv.conf',
  'gai.conf',
  'services',
  'protocols',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'pki',
  'crypto-policies',
  'localtime',
  'timezone',
  'alternatives',
  'os-release',
  'mime.types',
];

function etcFolder(platform: SandboxPlatform): string | null {
  return platform === 'linux' ? '/etc' : platform === 'darwin' ? '/private/etc' : null;
}

/**
 * The sandbox mirrors the rules in force at spawn: read grants read-only, write grants
 * read-write, denies hidden or read-only. A later approval cannot widen a running sandbox.
 */
export function sandboxGrants(rules: readonly Rule[]): SandboxGrants {
  const values = (effect: Rule['effect'], kind: Rule['kind']) => rules.filter((rule) => rule.effect === effect && rule.kind === kind && path.isAbsolute(rule.value)).map((rule) => rule.value);
  return { read: values('allow', 'read'), write: values('allow', 'write'), denyRead: values('deny', 'read'), denyWrite: values('deny', 'write') };
}

/**
 * The runtime's rules: reads are deny-then-allow (the root is denied, what the run may see is
 * allowed back; a deny more specific than an allow stays denied), writes are allow-only with
 * denies winning. `builtIn`: the runtime's own write denies for the run's folders (./built-in-denies.ts). A read-denied folder shows as an empty private folder, so denying `/` also
 * gives the run a private /tmp and home.
 */
export function filesystemView(files: RunFiles, platform: SandboxPlatform, builtIn: readonly string[] = []): FilesystemView {
  const etc = etcFolder(platform);
  const system = [...SYSTEM_READ[platform], ...(etc === null ? [] : ETC_READ.map((name) => `${etc}/${name}`))];
  const unique = (entries: readonly string[]) => [...new Set(entries.map((entry) => pathsOf(platform).resolve(entry)))];
  return {
    denyRead: unique([...(platform === 'win32' ? [] : ['/']), ...files.hidden, ...files.grants.denyRead]),
    allowRead: unique([...system, ...files.programs, ...files.readOnly, ...files.writable, ...files.grants.read, ...files.grants.write]),
    allowWrite: unique([...files.writable, ...files.grants.write]),
    // What may not be read may not be written either (a read-denied folder shows as an empty private one).
    denyWrite: unique([...files.grants.denyWrite, ...files.grants.denyRead, ...builtIn]),
  };
}

/** Folders the sandbox gives every Linux run its own of: a grant there could not reach this machine's. */
const PRIVATE_PER_RUN: Readonly<Record<SandboxPlatform, readonly string[]>> = { linux: ['/dev', '/proc'], darwin: [], win32: [] };

/**
 * Refuses a write grant the sandbox could never honour (issue 12 #7): the run writes into its
 * own /dev or /proc, so the grant would seem to work and change nothing. Grants over folders
 * the sandbox mounts pieces of (/etc, /usr, /tmp) compose with it and are not refused.
 */
export function assertGrantsComposeWithSandbox(rules: readonly Rule[], platform: SandboxPlatform | null): void {
  if (platform === null) return;
  for (const rule of rules) {
    if (rule.effect !== 'allow' || rule.kind !== 'write') continue;
    const own = PRIVATE_PER_RUN[platform].find((folder) => within(rule.value, folder, pathsOf(platform)));
    if (own !== undefined) {
      throw new WardError('invalid_grant', `--allow-write=${rule.value}: every sandboxed run has its own ${own}, so a write grant there could not reach this machine's; it is refused rather than kept as a grant that does nothing`, {
        desktop: `A write grant for ${rule.value} is refused: every sandboxed run has its own ${own}, so the grant could not reach this machine's.`,
      });
    }
  }
}

/** Whether the sandboxed child can reach a host path at all (`write`: and write to it). */
export type Reachability = (hostPath: string, write: boolean) => boolean;

/**
 * The same decision the runtime makes, for Ward's answer to a permission question: a path is readable when an allowed
 * folder covers it and no more specific deny does; writable when a write folder covers it and no
 * deny does.
 */
export function reachability(view: FilesystemView, platform: SandboxPlatform): Reachability {
  const paths = pathsOf(platform);
  const depth = (p: string) => paths.resolve(p).split(/[\\/]/).filter((part) => part !== '').length;
  return (hostPath, write) => {
    const target = paths.resolve(hostPath);
    const deepest = (entries: readonly string[]) => Math.max(-1, ...entries.filter((entry) => within(target, entry, paths)).map(depth));
    const allowed = deepest(view.allowRead);
    if (allowed < 0 || deepest(view.denyRead) > allowed) return false;
    if (!write) return true;
    return deepest(view.allowWrite) >= 0 && deepest(view.denyWrite) < 0;
  };
}

export function within(child: string, parent: string, paths: path.PlatformPath = path): boolean {
  const rel = paths.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !paths.isAbsolute(rel));
}

/** Windows paths are handled as Windows paths wherever this runs (its config is tested on Linux). */
function pathsOf(platform: SandboxPlatform): path.PlatformPath {
  return platform === 'win32' ? path.win32 : path.posix;
}
