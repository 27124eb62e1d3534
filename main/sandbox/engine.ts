/**
 * S1, S3: the one sandbox code path for every OS, on @anthropic-ai/sandbox-runtime (Claude Code's
 * own sandbox: bubblewrap with the network namespace removed and seccomp on Linux, Seatbelt on
 * macOS, a sandbox user with a WFP egress fence on Windows). Every process a run starts is in
 * it; its only way out is the runtime's proxy, which lets through exactly the run's allowed
 * hosts (its `net` grants, the broker and the model gateway) and asks Ward about any other.
 *
 * The runtime is one per process (its `initialize` is once), with no host allowed by itself:
 * each run registers its own list under an unguessable id its connections present to the proxy.
 * A host no list covers goes to the ask callback, which gets only `{host, port}`: with one run
 * live it is that run's question, answered while the connection waits; with several, the
 * connection is refused with a reason the model can read, the refusal (recorded under the run's
 * id) says whose it was, and that run asks; an allowed host joins its list for the retry.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { WardError, describeError } from '../base/errors.js';
import { traceMark } from '../base/trace.js';
import { builtInDenies, cacheRuntimeScans } from './built-in-denies.js';
import type { DenyScanCache } from './deny-scan-cache.js';
import { filesystemView, reachability, type FilesystemView, type Reachability, type RunFiles, type SandboxPlatform } from './files.js';
import { fileOrItsFolder, socatThatDiesWithWard, type GuardedFolders } from './program-view.js';
import type { StandInNotes } from './stand-ins.js';

export type SandboxMode = 'off' | 'require' | 'auto';

export interface SandboxStatus {
  readonly mode: SandboxMode;
  /** Whether runs are confined (files and network). */
  readonly confined: boolean;
  /** Why (not), for `ward doctor` and errors. */
  readonly detail: string;
}

export interface HostQuestion {
  readonly host: string;
  readonly port: number;
}

/** A run's answer about a host: allowed (it joins the run's list), or refused with a reason the model reads. */
export type HostAnswer = { readonly allow: true } | { readonly allow: false; readonly reason: string };

export interface SandboxCommand {
  readonly binary: string;
  readonly args: readonly string[];
  /** The process's whole environment (Ward's allowlist); nothing of Ward's own is added. */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
}

export interface RunSandbox {
  readonly command: SandboxCommand;
  readonly files: RunFiles;
  /** Hosts the run may reach, in the runtime's grammar (`host`, `host:port`, `*.domain`, `127.0.0.1:PORT`). */
  readonly allowedHosts: readonly string[];
  /** Decides a host no list covers: the run's grants, then its person (P3). */
  readonly decideHost: (question: HostQuestion) => Promise<HostAnswer>;
}

/** A stdio server Ward starts in the sandbox (S5), with its own profile. */
export interface ServerLaunch {
  /** Who it is, for refusals ("connection files"). */
  readonly name: string;
  readonly command: SandboxCommand;
  readonly files: RunFiles;
  /** The only hosts it may reach, in the runtime's grammar. */
  readonly allowedHosts: readonly string[];
}

export interface SandboxedLaunch {
  /** What to spawn (an argv array; the runtime's own wrapper runs inside the sandbox). */
  readonly binary: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly reachable: Reachability;
  /** Paths the runtime may stand an empty file or folder in for while the sandbox runs (./built-in-denies.ts). */
  readonly standIns: readonly string[];
  /** S6: the built-in denies it was set up with, and the folders they are of. */
  readonly builtIn: { readonly roots: readonly string[]; readonly paths: readonly string[] };
  /** Once the child has exited: its host list goes, and the runtime releases its mounts. */
  release(): void;
}

type Runtime = typeof import('@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-manager.js').SandboxManager;

/** Started by this name, any POSIX system's shell reads no start-up file for a command (S6). */
const POSIX_SHELL = '/bin/sh';

/** A host's question while the person is being asked: later refusals of it say so instead of asking again. */
const WAITING = 'the person has not answered yet';

/** WARD_SANDBOX=require without a working sandbox refuses the run (S1). */
export function assertSandboxUsable(status: SandboxStatus): void {
  if (status.mode === 'require' && !status.confined) {
    throw new WardError('sandbox_unavailable', `WARD_SANDBOX=require and ${status.detail.replace('runs are NOT sandboxed: ', '')}; the run was not started`);
  }
}

export function parseSandboxMode(value: string | undefined): SandboxMode {
  if (value === undefined || value === '') return 'auto';
  if (value === 'off' || value === 'require' || value === 'auto') return value;
  throw new WardError('invalid_config', `WARD_SANDBOX must be off, require or auto (got ${JSON.stringify(value)})`);
}

export function sandboxPlatform(platform: NodeJS.Platform = process.platform): SandboxPlatform | null {
  return platform === 'linux' || platform === 'darwin' || platform === 'win32' ? platform : null;
}

/** A value for the runtime's inner `bash -c`: single-quoted, so nothing in it is interpreted. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The folder with the runtime's helpers (apply-seccomp, the Windows helper): the sandbox must see it. */
export function runtimeHelpersFolder(): string {
  const entry = createRequire(import.meta.url).resolve('@anthropic-ai/sandbox-runtime');
  return path.join(path.dirname(path.dirname(entry)), 'vendor');
}

/**
 * What a sandboxed program needs to see read-only to start: its folder (and its target's, through
 * a symlink), or the file alone where the folder is or holds the home folder or Ward's data, and
 * the runtime's helpers.
 */
export function programFolders(binary: string, guarded: GuardedFolders): string[] {
  return [...new Set([fileOrItsFolder(path.resolve(binary), guarded), fileOrItsFolder(fs.realpathSync(binary), guarded), runtimeHelpersFolder()])];
}

interface LiveRun {
  readonly commandId: string;
  readonly allowed: Set<string>;
  readonly decideHost: RunSandbox['decideHost'];
  /** Hosts being asked about now, so a retry is refused as "waiting", not asked twice. */
  readonly asking: Set<string>;
  /** A run has a person to ask; a connection's server has none. */
  readonly asks: boolean;
}

export class SandboxEngine {
  private runtime: Promise<Runtime> | undefined;
  private readonly live = new Map<string, LiveRun>();
  /** Refusals handed out while several runs were live, waiting for the refusal record that names the run. */
  private readonly unattributed = new Map<string, number>();
  private probed: Promise<SandboxStatus> | undefined;
  private initialized: Promise<Runtime> | undefined;

  constructor(
    private readonly mode: SandboxMode,
    private readonly platform: SandboxPlatform | null = sandboxPlatform(),
    private readonly notes: StandInNotes | null = null,
    /** Deny scans kept per folder tree (issue 29); null: every launch scans. */
    private readonly denyScans: DenyScanCache | null = null,
  ) {}

  /** Whether runs are confined here: WARD_SANDBOX, then whether the sandbox works on this machine. */
  async status(): Promise<SandboxStatus> {
    if (this.mode !== 'off') return this.availability();
    return { mode: this.mode, confined: false, detail: 'runs are NOT sandboxed: WARD_SANDBOX=off' };
  }

  /** Whether the sandbox works here at all: the platform, the runtime's own dependency check (bwrap, socat, ripgrep…). Probed once. */
  private availability(): Promise<SandboxStatus> {
    this.probed ??= this.probe();
    return this.probed;
  }

  private async probe(): Promise<SandboxStatus> {
    const mode = this.mode;
    const not = (why: string): SandboxStatus => ({ mode, confined: false, detail: `runs are NOT sandboxed: ${why}` });
    if (this.platform === null) return not(`no sandbox for ${process.platform}`);
    try {
      const runtime = await this.load();
      const check = runtime.isSupportedPlatform() ? await runtime.checkDependenciesAsync() : { errors: ['this platform version is not supported'], warnings: [] };
      return check.errors.length > 0
        ? not(`${check.errors.join('; ')} (Debian: apt-get install bubblewrap socat ripgrep)`)
        : { mode, confined: true, detail: 'runs are sandboxed: files as granted, network only through Ward (granted hosts, the broker, the model gateway), no model key in the child' };
    } catch (error) {
      return not(`the sandbox runtime could not be loaded: ${describeError(error)}`);
    }
  }

  /** WARD_SANDBOX=require fails closed: the run is refused before anything is spawned. */
  async assertUsable(): Promise<SandboxStatus> {
    const status = await this.status();
    assertSandboxUsable(status);
    return status;
  }

  /**
   * Starts the runtime's proxies now when runs are confined, without waiting, so a turn's launch
   * finds them up (or nearly) instead of starting them then. A failure surfaces at launch.
   */
  prewarm(): void {
    void this.status()
      .then((status) => (status.confined ? this.ready() : undefined))
      .catch(() => undefined);
  }

  /** The command inside the sandbox, or null when runs are not sandboxed here (`auto` without a sandbox, or `off`). */
  async launch(run: RunSandbox): Promise<SandboxedLaunch | null> {
    const status = await this.assertUsable();
    if (!status.confined) return null;
    return this.wrap(run, true);
  }

  /**
   * S5: a stdio server that asked for the sandbox, whatever WARD_SANDBOX says for runs; refused
   * when this machine has none (fail closed). It reaches only its own hosts: a server has no
   * person to ask, so every other host is refused, saying so.
   */
  async launchServer(server: ServerLaunch): Promise<SandboxedLaunch> {
    const status = await this.availability();
    if (!status.confined) {
      throw new WardError('sandbox_unavailable', `${server.name} asked for the sandbox (--sandbox) and ${status.detail.replace('runs are NOT sandboxed: ', '')}; the server was not started`, {
        desktop: `${server.name} is set to run in the OS sandbox and ${status.detail.replace('runs are NOT sandboxed: ', '')}; the server was not started.`,
      });
    }
    const refuse = async ({ host, port }: HostQuestion): Promise<HostAnswer> => ({
      allow: false,
      reason: `${host}:${port} is not in the --sandbox-net list of ${server.name}; a server has no person to ask, so any other host is refused`,
    });
    return this.wrap({ command: server.command, files: server.files, allowedHosts: server.allowedHosts, decideHost: refuse }, false);
  }

  /** S6: whether a launch now would get the built-in denies `launched` has (a warm CLI's whose would differ is not reused). */
  async sameBuiltInDenies(launched: SandboxedLaunch): Promise<boolean> {
    if (this.platform === 'win32') return true;
    const now = new Set((await builtInDenies(launched.builtIn.roots, this.denyScans)).paths);
    return now.size === new Set(launched.builtIn.paths).size && launched.builtIn.paths.every((denied) => now.has(denied));
  }

  private async wrap(run: RunSandbox, asks: boolean): Promise<SandboxedLaunch> {
    const runtime = await this.ready();
    traceMark('sandbox-runtime-ready');
    const commandId = randomBytes(16).toString('base64url');
    const live: LiveRun = { commandId, allowed: new Set(run.allowedHosts), decideHost: run.decideHost, asking: new Set(), asks };
    // The proxy's sockets live in the host's temp folder, which the view otherwise hides (Linux).
    const sockets = [runtime.getLinuxHttpSocketPath(), runtime.getLinuxSocksSocketPath()].filter((socket): socket is string => typeof socket === 'string');
    const shim = socatThatDiesWithWard();
    // S6: the runtime's own denies for every folder the run may write, not only for Ward's working directory.
    const roots = [...run.files.writable, ...run.files.grants.write];
    this.notes?.sweepOnce();
    const builtIn = this.platform === 'win32' ? { paths: [], standIns: [] } : await builtInDenies(roots, this.denyScans);
    this.notes?.launching(commandId, builtIn.standIns);
    const view = filesystemView({ ...run.files, readOnly: [...run.files.readOnly, ...sockets, ...(shim === null ? [] : [path.dirname(shim)])] }, this.platform!, builtIn.paths);
    const { command } = run;
    // The runtime puts loopback in NO_PROXY; the broker and the gateway are reached through its proxy like any host.
    const inner = ['env', '-u', 'NO_PROXY', '-u', 'no_proxy', command.binary, ...command.args].map(shellQuote).join(' ');
    runtime.registerCommandNetworkLists(commandId, { allowedDomains: [...live.allowed] });
    this.live.set(commandId, live);
    let argv: string[];
    try {
      argv = await this.sandboxArgv(runtime, inner, view, command.cwd, { commandId, commandText: path.basename(command.binary) });
    } catch (error) {
      this.forget(runtime, commandId);
      throw new WardError('sandbox_unavailable', `the sandbox could not be set up for ${asks ? 'this run' : 'this server'}: ${describeError(error)}`, { cause: error });
    }
    let released = false;
    return {
      binary: argv[0]!,
      args: argv.slice(1),
      // The wrapper and bubblewrap need PATH; everything else the child sees is Ward's allowlist.
      env: command.env,
      cwd: command.cwd,
      reachable: reachability(view, this.platform!),
      standIns: builtIn.standIns,
      builtIn: { roots, paths: builtIn.paths },
      release: () => {
        if (released) return;
        released = true;
        this.forget(runtime, commandId);
        runtime.cleanupAfterCommand();
        // The runtime removes its stand-ins with the last sandbox of the process.
        if (this.live.size === 0) this.notes?.allReleased();
      },
    };
  }

  /**
   * S6: what to spawn. Left to itself the runtime starts bubblewrap, and the command inside it,
   * from bash, and bash whose stdin is a socket (as a spawned child's is) takes itself for a
   * remote shell and sources /etc/bash.bashrc and ~/.bashrc, on the host, before the sandbox
   * exists; it also sources BASH_ENV. A shell started as `sh` reads no start-up file when it is
   * not interactive (dash, and bash or zsh in sh mode alike), and `exec` makes bubblewrap Ward's
   * own child, so its --die-with-parent follows Ward. Windows has no such shell.
   */
  private async sandboxArgv(runtime: Runtime, inner: string, view: FilesystemView, cwd: string, options: { commandId: string; commandText: string }): Promise<string[]> {
    if (this.platform === 'win32') return (await runtime.wrapWithSandboxArgv(inner, undefined, { filesystem: view }, undefined, cwd, options)).argv;
    const wrapped = await runtime.wrapWithSandbox(inner, POSIX_SHELL, { filesystem: view }, undefined, options);
    return [POSIX_SHELL, '-c', `exec ${wrapped}`];
  }

  /** Stops the runtime's proxies (Ward is exiting). */
  async close(): Promise<void> {
    if (this.runtime === undefined) return;
    const runtime = await this.runtime.catch(() => undefined);
    // A prewarm still starting the proxies finishes first: a reset in the middle of it can leave a proxy up.
    await this.initialized?.catch(() => undefined);
    this.live.clear();
    if (this.platform === 'linux' && this.denyScans !== null) await cacheRuntimeScans(null);
    await runtime?.reset();
    this.notes?.allReleased();
  }

  private forget(runtime: Runtime, commandId: string): void {
    this.live.delete(commandId);
    runtime.unregisterCommandNetworkLists(commandId);
  }

  private load(): Promise<Runtime> {
    // The manager's own module, not the package index: the index also loads the runtime's config
    // schemas and zod 3 (a dozen modules, ~20 ms of every sandboxed `ward run`), which Ward never uses.
    // The runtime is pinned exactly; should the file move, the sandbox tests fail (and doctor says why).
    this.runtime ??= import('@anthropic-ai/sandbox-runtime/dist/sandbox/sandbox-manager.js').then((module) => module.SandboxManager);
    return this.runtime;
  }

  /** The runtime with its proxies up: no host allowed by itself, every undecided host asked about. */
  private ready(): Promise<Runtime> {
    this.initialized ??= this.load().then(async (runtime) => {
      const socatPath = socatThatDiesWithWard();
      const base = {
        network: { allowedDomains: [], deniedDomains: [] },
        filesystem: { denyRead: ['/'], allowRead: [], allowWrite: [], denyWrite: [] },
        ...(socatPath === null ? {} : { socatPath }),
      };
      await runtime.initialize(base, (question) => this.onAsk(runtime, question));
      if (this.platform === 'linux' && this.denyScans !== null) await cacheRuntimeScans(this.denyScans);
      runtime.getSandboxViolationStore().subscribe((violations) => this.onViolations(runtime, violations));
      return runtime;
    });
    return this.initialized;
  }

  private async onAsk(runtime: Runtime, { host, port }: { host: string; port: number | undefined }): Promise<true | { allow: false; reason: string }> {
    const question = { host, port: port ?? 0 };
    const runs = [...this.live.values()];
    if (runs.length === 1) {
      const answer = await this.decide(runtime, runs[0]!, question);
      return answer.allow ? true : { allow: false, reason: answer.reason };
    }
    // Several runs: this connection is refused, and its refusal record (under the run's id) says whose it was.
    // A connection's server may be among them: the refusal is worded for an agent and a server alike.
    const key = `${host}:${question.port}`;
    const servers = `a connection's server reaches only its --sandbox-net hosts: it has no person to ask`;
    if (!runs.some((run) => run.asks)) return { allow: false, reason: `${key} is refused: ${servers}` };
    this.unattributed.set(key, (this.unattributed.get(key) ?? 0) + 1);
    const agents = `${key} is not granted to this agent; Ward is asking the person in this conversation: try again once they have answered`;
    return { allow: false, reason: runs.every((run) => run.asks) ? agents : `${agents}; ${servers}` };
  }

  private onViolations(runtime: Runtime, violations: readonly { line: string; encodedCommand?: string }[]): void {
    const latest = violations.at(-1);
    if (latest?.encodedCommand === undefined) return;
    const match = /^deny network-outbound (\S+):(\d+) /.exec(latest.line);
    if (match === null) return;
    const key = `${match[1]}:${match[2]}`;
    const pending = this.unattributed.get(key) ?? 0;
    if (pending === 0) return;
    if (pending === 1) this.unattributed.delete(key);
    else this.unattributed.set(key, pending - 1);
    const commandId = Buffer.from(latest.encodedCommand, 'base64').toString('utf8');
    const run = this.live.get(commandId);
    if (run !== undefined) void this.decide(runtime, run, { host: match[1]!, port: Number(match[2]) });
  }

  /** Asks the run once per host at a time; an allowed host joins the run's list for every later connection. */
  private async decide(runtime: Runtime, run: LiveRun, question: HostQuestion): Promise<HostAnswer> {
    const key = `${question.host}:${question.port}`;
    if (run.asking.has(key)) return { allow: false, reason: `${key}: ${WAITING}` };
    run.asking.add(key);
    try {
      const answer = await run.decideHost(question).catch((error: unknown): HostAnswer => ({ allow: false, reason: `the permission check failed: ${describeError(error)}` }));
      if (answer.allow && this.live.get(run.commandId) === run) {
        run.allowed.add(key);
        runtime.registerCommandNetworkLists(run.commandId, { allowedDomains: [...run.allowed] });
      }
      return answer;
    } finally {
      run.asking.delete(key);
    }
  }
}
