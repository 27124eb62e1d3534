/**
 * R3 defence in depth: on Linux the pinned CLI runs inside bubblewrap (bwrap). Permissions
 * decide every tool call; the sandbox bounds what a granted call can reach: the system read-only,
 * the CLI's own folder read-only, the run folder read-only, the conversation's workspace and the
 * namespace's CLAUDE_CONFIG_DIR read-write, and nothing else of the file system (not the home
 * folder, not other namespaces, not the Ward databases, not /run/user and its D-Bus/keyring
 * sockets). The network stays shared: the child must reach the loopback broker and the model
 * provider. The profile is documented in native-helpers/linux/README.md.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import type { Rule } from '../permissions/grants.js';

export type SandboxMode = 'off' | 'require' | 'auto';

/** The declarative Linux profile; sandboxArgs turns it into bwrap's argv. */
export const LINUX_PROFILE = {
  /** Read-only: the system programs and libraries (the Bash tool runs /bin/sh, git, ...). */
  systemReadOnly: ['/usr'],
  /** Merged-/usr links (or real folders on older systems), reproduced as they are on the host. */
  systemLinksOrFolders: ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'],
  /** Only what name resolution, TLS, users and the dynamic loader read from /etc, read-only, when present. */
  etcReadOnly: [
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
  ],
  /** Private and empty per run: /tmp, and the home folder (the CLI and the shell expect it to exist). */
  privateTmpfs: ['/tmp'],
  namespaces: ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'],
  flags: ['--die-with-parent', '--new-session', '--cap-drop', 'ALL'],
} as const;

export interface SandboxPaths {
  /** The pinned CLI binary (its folder is bound read-only). */
  readonly binary: string;
  /** Read-write: the conversation's workspace and the namespace's CLAUDE_CONFIG_DIR. */
  readonly writable: readonly string[];
  /** Read-only: the run folder with mcp.json and the instructions. */
  readonly readOnly: readonly string[];
  /** The child's working folder (inside a writable path). */
  readonly cwd: string;
  /** The child's HOME, given an empty private tmpfs (so nothing of the real home is visible). */
  readonly home?: string;
  /** Paths the run's grants name (sandboxGrants): bound when they exist at spawn. */
  readonly grants?: SandboxGrants;
}

/** The file-system part of the run's permission rules, as the sandbox mirrors it. */
export interface SandboxGrants {
  readonly read: readonly string[];
  readonly write: readonly string[];
  /** Denied writes inside a granted write: bound read-only on top. */
  readonly denyWrite: readonly string[];
}

/**
 * The sandbox shows what the rules in force at spawn allow: read grants read-only, write grants
 * read-write, denied writes read-only. A later approval at a prompt cannot widen a running
 * sandbox, so a path outside these stays invisible to the child even when approved.
 */
export function sandboxGrants(rules: readonly Rule[]): SandboxGrants {
  const values = (effect: Rule['effect'], kind: Rule['kind']) => rules.filter((rule) => rule.effect === effect && rule.kind === kind && path.isAbsolute(rule.value)).map((rule) => rule.value);
  return { read: values('allow', 'read'), write: values('allow', 'write'), denyWrite: values('deny', 'write') };
}

type Mount = { kind: 'tmpfs' | 'proc' | 'dev'; dest: string } | { kind: 'bind' | 'ro-bind' | 'bind-try' | 'ro-bind-try'; src: string; dest: string };

function depth(p: string): number {
  return p.split('/').filter((part) => part !== '').length;
}

/** Both the path as named and its real path (the CLI may use either; a symlinked parent is not there in the sandbox). */
function bothPaths(p: string): string[] {
  const resolved = path.resolve(p);
  let real = resolved;
  try {
    real = fs.realpathSync(resolved);
  } catch {
    // not there yet: bwrap reports it
  }
  return real === resolved ? [resolved] : [resolved, real];
}

function within(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The mounts of one run, outermost first, and the options that come before them (flags, links). */
function sandboxLayout(paths: SandboxPaths): { args: string[]; mounts: Mount[] } {
  const args: string[] = [...LINUX_PROFILE.namespaces, ...LINUX_PROFILE.flags];
  const mounts: Mount[] = [];
  for (const dir of LINUX_PROFILE.systemReadOnly) if (fs.existsSync(dir)) mounts.push({ kind: 'ro-bind', src: dir, dest: dir });
  for (const entry of LINUX_PROFILE.systemLinksOrFolders) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(entry);
    } catch {
      continue;
    }
    // Links go first: they are not mounts, and later mounts may pass through them.
    if (stat.isSymbolicLink()) args.push('--symlink', fs.readlinkSync(entry), entry);
    else if (stat.isDirectory()) mounts.push({ kind: 'ro-bind', src: entry, dest: entry });
  }
  for (const name of LINUX_PROFILE.etcReadOnly) mounts.push({ kind: 'ro-bind-try', src: `/etc/${name}`, dest: `/etc/${name}` });
  mounts.push({ kind: 'proc', dest: '/proc' }, { kind: 'dev', dest: '/dev' });

  const binds: Mount[] = [];
  const add = (kind: 'bind' | 'ro-bind' | 'bind-try' | 'ro-bind-try', dir: string) => {
    for (const p of bothPaths(dir)) binds.push({ kind, src: p, dest: p });
  };
  add('ro-bind', path.dirname(paths.binary));
  // A binary reached through a symlink needs its real folder too.
  const realBinary = bothPaths(paths.binary).at(-1)!;
  if (path.dirname(realBinary) !== path.dirname(path.resolve(paths.binary))) add('ro-bind', path.dirname(realBinary));
  for (const dir of paths.writable) add('bind', dir);
  for (const dir of paths.readOnly) add('ro-bind', dir);
  for (const dir of paths.grants?.read ?? []) add('ro-bind-try', dir);
  for (const dir of paths.grants?.write ?? []) add('bind-try', dir);
  for (const dir of paths.grants?.denyWrite ?? []) add('ro-bind-try', dir);
  // Private tmpfs, unless a bind shows the real folder there (a grant of the home folder itself).
  const tmpfs = [...LINUX_PROFILE.privateTmpfs, ...(paths.home !== undefined && path.isAbsolute(paths.home) ? [path.resolve(paths.home)] : [])];
  for (const dest of tmpfs) if (dest !== '/' && !binds.some((bind) => within(dest, bind.dest))) mounts.push({ kind: 'tmpfs', dest });
  mounts.push(...binds);

  // From the outside in, so a nested mount is not hidden by its parent; at one depth, the system
  // and tmpfs first, then the binds (a read-only deny last, as it was added last).
  const ordered = mounts.map((mount, index) => ({ mount, index })).sort((a, b) => depth(a.mount.dest) - depth(b.mount.dest) || a.index - b.index);
  return { args, mounts: ordered.map(({ mount }) => mount) };
}

/** The bwrap options (everything before the command) for one run. */
export function sandboxArgs(paths: SandboxPaths): string[] {
  const { args, mounts } = sandboxLayout(paths);
  for (const mount of mounts) {
    if ('src' in mount) args.push(`--${mount.kind}`, mount.src, mount.dest);
    else args.push(`--${mount.kind}`, mount.dest);
  }
  args.push('--chdir', path.resolve(paths.cwd));
  return args;
}

/** Whether the sandboxed child can reach a host path at all (`write`: and write to it). */
export type Reachability = (hostPath: string, write: boolean) => boolean;

/** What the child of a run can reach: the innermost mount over a path decides (a private tmpfs hides it). */
export function sandboxView(paths: SandboxPaths): Reachability {
  const { mounts } = sandboxLayout(paths);
  return (hostPath, write) => {
    const target = path.resolve(hostPath);
    const over = mounts.filter((mount) => within(target, mount.dest)).at(-1);
    if (over === undefined || over.kind === 'tmpfs') return false;
    return !write || over.kind === 'bind' || over.kind === 'bind-try';
  };
}

export interface SandboxOptions {
  /** Default: WARD_SANDBOX in Ward's environment, else auto. */
  readonly mode?: SandboxMode;
  /** The bwrap program (default: found on PATH of Ward's environment). Test seam. */
  readonly bwrap?: string;
}

export interface SandboxState {
  readonly mode: SandboxMode;
  /** The bwrap that runs children, or null when runs are not sandboxed. */
  readonly bwrap: string | null;
  /** Why runs are (not) sandboxed, for `ward doctor` and errors. */
  readonly detail: string;
}

export function parseSandboxMode(value: string | undefined): SandboxMode {
  if (value === undefined || value === '') return 'auto';
  if (value === 'off' || value === 'require' || value === 'auto') return value;
  throw new WardError('invalid_config', `WARD_SANDBOX must be off, require or auto (got ${JSON.stringify(value)})`);
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return null;
}

const PROBE_TIMEOUT_MS = 5_000;
/** bwrap works or not for the life of the process (kernel, container, user namespaces): probe once per program. */
const probed = new Map<string, string | null>();

/** Null when `bwrap --ro-bind / / true` works, else why not. */
export function probeBwrap(bwrap: string): string | null {
  const known = probed.get(bwrap);
  if (known !== undefined) return known;
  const result = spawnSync(bwrap, ['--ro-bind', '/', '/', 'true'], { env: {}, stdio: ['ignore', 'ignore', 'pipe'], timeout: PROBE_TIMEOUT_MS });
  let problem: string | null = null;
  if (result.error !== undefined) problem = `${bwrap} could not be run: ${result.error.message}`;
  else if (result.status !== 0) problem = `${bwrap} does not work here (exit ${String(result.status ?? result.signal)}): ${result.stderr.toString('utf8').trim().slice(0, 300)}`;
  probed.set(bwrap, problem);
  return problem;
}

/** Whether runs are sandboxed, decided from the mode and a probe of bwrap. Never throws for `require`: see assertSandbox. */
export function sandboxState(env: NodeJS.ProcessEnv, options: SandboxOptions = {}, platform: NodeJS.Platform = process.platform): SandboxState {
  const mode = options.mode ?? parseSandboxMode(env.WARD_SANDBOX);
  if (mode === 'off') return { mode, bwrap: null, detail: 'runs are NOT sandboxed: WARD_SANDBOX=off' };
  if (platform !== 'linux') {
    return { mode, bwrap: null, detail: `runs are NOT sandboxed: no OS sandbox is wired on ${platform} (native-helpers/macos/ward.sb is an untested draft)` };
  }
  const bwrap = options.bwrap ?? findOnPath('bwrap', env);
  if (bwrap === null) return { mode, bwrap: null, detail: 'runs are NOT sandboxed: bwrap (Debian package bubblewrap) is not on PATH' };
  const problem = probeBwrap(bwrap);
  if (problem !== null) return { mode, bwrap: null, detail: `runs are NOT sandboxed: ${problem}` };
  return { mode, bwrap, detail: `runs are sandboxed with ${bwrap} (read-only system, workspace and CLI config read-write, no home folder, shared network)` };
}

/** WARD_SANDBOX=require fails closed: the run is refused before anything is spawned. */
export function assertSandbox(state: SandboxState): void {
  if (state.mode === 'require' && state.bwrap === null) {
    throw new WardError('sandbox_unavailable', `WARD_SANDBOX=require and ${state.detail.replace('runs are NOT sandboxed: ', '')}; the run was not started`);
  }
}

export interface Launch {
  readonly binary: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}

/**
 * The launch wrapped in bwrap, or unchanged when runs are not sandboxed. `inner` names the
 * pinned binary so Stop can interrupt the CLI itself (bwrap does not forward SIGINT).
 */
export function sandboxLaunch<T extends Launch>(
  state: SandboxState,
  launch: T,
  paths: Omit<SandboxPaths, 'binary' | 'cwd' | 'home'>,
): T & { inner?: string; reachable?: Reachability } {
  assertSandbox(state);
  if (state.bwrap === null) return launch;
  const env: Record<string, string> = { ...launch.env };
  // The host's temp folder is not there; the private /tmp is.
  for (const name of ['TMPDIR', 'TMP', 'TEMP']) if (env[name] !== undefined) env[name] = '/tmp';
  const full: SandboxPaths = { ...paths, binary: launch.binary, cwd: launch.cwd, home: env.HOME };
  const args = [...sandboxArgs(full), '--', launch.binary, ...launch.args];
  return { ...launch, binary: state.bwrap, args, env, inner: launch.binary, reachable: sandboxView(full) };
}

/**
 * The pid of the process under `rootPid` that runs `binary` (same device and inode as the pinned
 * file), found through /proc; null when it has not started yet or has gone.
 */
export function findInnerProcess(rootPid: number, binary: string, maxDepth = 3): number | null {
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
