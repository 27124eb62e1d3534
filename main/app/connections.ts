/**
 * A namespace's MCP connections as one service for the CLI and the desktop: each use opens the
 * namespace's registry and secret store (N1), checks the admin policy (P5) and closes what it
 * started. The connections the policy defines (managedConnections) are added to each namespace
 * on first use and cannot be removed. Failures leave as WardErrors with stable codes. Views for the window carry public
 * metadata and state only: no secret, token or secret-variable value (C3, U3).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { escapeLineForWindow } from '../../common/display.js';
import type { ConnectionView as WindowConnectionView } from '../../common/views.js';
import { WardError, isWardError } from '../base/errors.js';
import type { ConnectionRegistry } from '../connections/registry.js';
import { checkSandboxFolder, exposedToolName, parseClientMetadataUrl, parseConnectionSpec, type ConnectionSpec } from '../connections/config.js';
import { findExecutable } from '../base/process.js';
import { programFolders, type SandboxEngine } from '../sandbox/engine.js';
import { NO_GRANTS, wardPrivatePaths } from '../sandbox/files.js';
import { fileOrItsFolder, guardedFolders, type GuardedFolders } from '../sandbox/program-view.js';
import { readSettingsObject, SETTINGS_FILE } from '../base/settings-file.js';
import { UpstreamError } from '../upstreams/errors.js';
import type { Elicitor } from '../upstreams/elicitation.js';
import { openConnections, type ConfineServer, type ConnectionManager, type ConnectionView } from '../connections/index.js';
import type { OpenStoreOptions } from '../credentials/open-store.js';
import { namespaceDir, wardCommand, type Namespace } from '../namespaces/namespace.js';
import { assertConnectionAllowed, isManagedConnection, LOCAL_SERVER_UNSANDBOXED, type AdminPolicy, type ManagedConnection } from '../policy/policy.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { NamespaceService } from './namespaces.js';

/** A server's tool description is its own text: one line, bounded, nothing invisible (P1). */
const TOOL_DESCRIPTION_MAX = 300;

const STATUS: Record<ConnectionView['health'], WindowConnectionView['status']> = {
  ok: 'signed_in',
  not_signed_in: 'signed_out',
  error: 'error',
  unknown: 'unknown',
};

/** What a connection's health asks of the person, in words for the CLI and the window alike. */
export function healthAdvice(view: ConnectionView, ns: Namespace): string | null {
  const login = wardCommand(ns, `connections login ${view.spec.name}`);
  if (view.health === 'not_signed_in' && view.lastErrorCode === 'insufficient_scope') {
    return `Needs more access: sign in again (${login}) to grant ${view.wantedScope ?? 'the scope it asks for'}.`;
  }
  if (view.health === 'not_signed_in') return `Sign in again (${login}).`;
  if (view.health === 'error') return `Last failure: ${view.lastErrorCode ?? 'unknown'}.`;
  return null;
}

/** A sandboxed server's settings in words: what it reaches and which folder it writes. */
export function sandboxText(spec: ConnectionSpec): string | null {
  if (spec.transport !== 'stdio' || spec.sandbox === null) return null;
  const { net, folder } = spec.sandbox;
  return `Runs in the sandbox: network ${net.length === 0 ? 'none' : `only ${net.join(', ')}`}; files: ${folder ?? 'a private folder of its own'} (read-write).`;
}

function toWindowView(view: ConnectionView, ns: Namespace, managedBy: string | null): WindowConnectionView {
  const { spec } = view;
  const parts = [
    healthAdvice(view, ns),
    sandboxText(spec),
    spec.transport === 'http' && spec.clientId !== null ? `Pre-registered client ${spec.clientId}.` : null,
  ].filter((part) => part !== null);
  return {
    id: spec.name,
    name: spec.name,
    url: spec.transport === 'http' ? spec.url : [spec.command, ...spec.args].join(' '),
    status: STATUS[view.health],
    detail: parts.length === 0 ? null : parts.join(' '),
    tools: view.tools.filter((pin) => pin.enabled && pin.status === 'pinned').map((pin) => exposedToolName(pin.connection, pin.name)),
    pins: view.tools.map((pin) => ({
      name: pin.name,
      exposedName: exposedToolName(pin.connection, pin.name),
      description: escapeLineForWindow(pin.description, TOOL_DESCRIPTION_MAX),
      enabled: pin.enabled,
      status: pin.status,
    })),
    managedBy,
  };
}

/**
 * The folders of the files a server's arguments name, as the person typed them for it
 * (`--command node --arg /srv/server.js`): the script must be readable for the server to start.
 * A script in the home folder is shown alone, not with the home folder around it.
 */
function argumentFolders(args: readonly string[], guarded: GuardedFolders): string[] {
  const files = args.filter((arg) => path.isAbsolute(arg) && fs.statSync(arg, { throwIfNoEntry: false })?.isFile() === true);
  return [...new Set(files.flatMap((file) => [fileOrItsFolder(path.resolve(file), guarded), fileOrItsFolder(fs.realpathSync(file), guarded)]))];
}

/** A program Ward will not show a sandboxed server is refused naming the connection. */
function refusingFor<T>(connection: string, show: () => T): T {
  try {
    return show();
  } catch (error) {
    if (isWardError(error, 'invalid_config')) throw new WardError('invalid_config', `connection ${connection} was not started: ${error.message}`, { cause: error });
    throw error;
  }
}

function managedSpec(managed: ManagedConnection): ConnectionSpec {
  return parseConnectionSpec('url' in managed ? { transport: 'http', ...managed } : { transport: 'stdio', ...managed });
}

/**
 * The organization's local server runs as the policy says now: a sandbox the admin added (or
 * changed, or removed) after the server was first added applies to its next start.
 */
function syncManagedSandbox(registry: ConnectionRegistry, managed: ManagedConnection, spec: ConnectionSpec): void {
  const stored = registry.get(managed.name).spec;
  if (spec.transport !== 'stdio' || stored.transport !== 'stdio' || !isManagedConnection(managed, stored)) return;
  if (JSON.stringify(stored.sandbox) !== JSON.stringify(spec.sandbox)) registry.setSandbox(managed.name, spec.sandbox);
}

/** Connection failures leave as WardErrors with codes scripts and windows can rely on. */
export function asWardError(error: unknown): unknown {
  if (!(error instanceof UpstreamError)) return error;
  // Ward's own detail says what happened to this server; the fixed text is worded for tool calls.
  const text = `${error.detail === '' ? error.message : error.detail} [${error.code}]`;
  if (error.code === 'not_signed_in' || error.code === 'insufficient_scope') return new WardError('not_signed_in', text, { cause: error });
  if (error.code === 'unauthorized') return new WardError('unauthorized', text, { cause: error });
  return new WardError('unavailable', text, { cause: error });
}

/** A change to one of a connection's tools, by its name or the name Ward lists it under. */
export type { ConnectionView, ToolPin } from '../connections/index.js';

export type ToolChange = { readonly action: 'enable' | 'disable' | 'repin'; readonly tool: string };

export interface ToolListing {
  readonly view: ConnectionView;
  /** Tools the server offers that cannot be used, and why. */
  readonly unusable: readonly { readonly name: string; readonly reason: string }[];
}

export class ConnectionService {
  constructor(
    private readonly namespaces: NamespaceService,
    private readonly policy: AdminPolicy | null,
    private readonly storeOptions: OpenStoreOptions,
    /** The one sandbox of this process, shared with runs (its runtime is one per process). */
    private readonly sandbox: () => SandboxEngine,
  ) {}

  /**
   * The namespace's connections, open until the caller closes them (a run keeps them for its
   * length). `onSecret` hears every credential value they read, for the run's redaction; `elicit`
   * asks its person when a server asks for input.
   */
  open(ns: Namespace, onSecret?: (value: string) => void, elicit?: (connection: string) => Elicitor): ConnectionManager {
    const clientMetadataUrl = this.clientMetadataUrl();
    const manager = openConnections(this.namespaces.folder, ns, {
      store: this.storeOptions,
      ...(onSecret === undefined ? {} : { onSecret }),
      ...(clientMetadataUrl === undefined ? {} : { clientMetadataUrl }),
      ...(elicit === undefined ? {} : { elicit }),
      confine: this.confine(ns),
      ...(this.policy?.localServersSandboxed === true ? { unsandboxedRefusal: `refused by ${this.policy.reason}: ${LOCAL_SERVER_UNSANDBOXED}` } : {}),
    });
    // Runs start servers from here too: the organization's local servers run as the policy says now.
    for (const managed of this.policy?.managedConnections ?? []) {
      if (manager.registry.has(managed.name)) syncManagedSandbox(manager.registry, managed, managedSpec(managed));
    }
    return manager;
  }

  /**
   * S5: a sandboxed server sees the system read-only, its program's folder and the folders of the
   * files its arguments name (`node /srv/server.js`) read-only, its own
   * folder read-write (the one it was given, else a private one in the namespace's data) and
   * nothing else; it reaches only its --sandbox-net hosts.
   */
  private confine(ns: Namespace): ConfineServer {
    return async (spec, command) => {
      const home = this.namespaces.home;
      const guarded = guardedFolders(home, command.env, os.homedir());
      const folder = spec.sandbox.folder === null ? this.privateFolder(ns, spec.name) : checkSandboxFolder(spec.sandbox.folder, home, guarded.homes);
      const binary = findExecutable(command.command, command.env.PATH);
      if (binary === null) throw new WardError('invalid_config', `connection ${spec.name}: ${JSON.stringify(command.command)} is not an executable file or a program on PATH`);
      const programs = refusingFor(spec.name, () => ({ programs: programFolders(binary, guarded), readOnly: argumentFolders(command.args, guarded) }));
      const launch = await this.sandbox().launchServer({
        name: `connection ${spec.name}`,
        command: { binary, args: command.args, env: command.env, cwd: folder },
        files: { ...programs, writable: [folder], grants: NO_GRANTS, hidden: wardPrivatePaths(home, command.env) },
        allowedHosts: spec.sandbox.net,
      });
      return { command: launch.binary, args: launch.args, env: launch.env, cwd: launch.cwd, release: () => launch.release() };
    };
  }

  /** A sandboxed server's own folder when it was given none: in the namespace's data, made on first start. */
  private privateFolder(ns: Namespace, connection: string): string {
    const folder = path.join(namespaceDir(this.namespaces.home, ns), 'connection-folders', connection);
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    return folder;
  }

  /** Ward's Client ID Metadata Document: the admin policy's, else the data folder's settings.json "clientMetadataUrl". */
  private clientMetadataUrl(): string | undefined {
    if (this.policy?.clientMetadataUrl != null) return parseClientMetadataUrl(this.policy.clientMetadataUrl, `the admin policy (${this.policy.sources.join(', ')})`);
    const home = this.namespaces.home;
    const value = readSettingsObject(home).clientMetadataUrl;
    return value === undefined ? undefined : parseClientMetadataUrl(value, path.join(home, SETTINGS_FILE));
  }

  /** Opens the namespace's connections for one action (the managed ones added first) and closes them after it. */
  async use<T>(store: NamespaceStore, action: (manager: ConnectionManager) => Promise<T> | T): Promise<T> {
    const manager = this.open(store.namespace);
    try {
      for (const managed of this.policy?.managedConnections ?? []) {
        // A connection of the user's that already has the name keeps it; the view says whose is whose.
        if (!manager.registry.has(managed.name)) await manager.add(managedSpec(managed));
      }
      return await action(manager);
    } catch (error) {
      throw asWardError(error);
    } finally {
      await manager.close();
    }
  }

  /** Adds a connection the policy allows (P5); secret variable values and a pre-registered client's secret go to the secret store (C1). */
  async add(store: NamespaceStore, input: unknown, secrets: Readonly<Record<string, string>> = {}, clientSecret?: string): Promise<ConnectionView> {
    const spec = parseConnectionSpec(input);
    assertConnectionAllowed(this.policy, spec.name, spec);
    if (spec.transport === 'stdio' && spec.sandbox?.folder != null) checkSandboxFolder(spec.sandbox.folder, this.namespaces.home, guardedFolders(this.namespaces.home, process.env, os.homedir()).homes);
    return this.use(store, async (manager) => {
      const record = await manager.add(spec, secrets, clientSecret);
      return manager.get(record.spec.name);
    });
  }

  async remove(store: NamespaceStore, name: string): Promise<void> {
    if (this.managedBy(name) !== null) throw new WardError('policy_refused', `connection ${name} is managed by your organization (${this.managedBy(name)}); it cannot be removed`);
    await this.use(store, async (manager) => {
      if (!(await manager.remove(name))) throw new WardError('not_found', `no connection named ${name}`);
    });
    // A server added later under this name starts with nothing of this one's.
    fs.rmSync(path.join(namespaceDir(this.namespaces.home, store.namespace), 'connection-folders', name), { recursive: true, force: true });
  }

  list(store: NamespaceStore): Promise<ConnectionView[]> {
    return this.use(store, (manager) => manager.list());
  }

  windowViews(store: NamespaceStore): Promise<WindowConnectionView[]> {
    return this.use(store, (manager) => manager.list().map((view) => this.windowView(store, view)));
  }

  /** What the desktop shows of one connection, its "Managed by" source (the card's lock) included. */
  windowView(store: NamespaceStore, view: ConnectionView): WindowConnectionView {
    return toWindowView(view, store.namespace, this.managedBy(view.spec.name, view.spec));
  }

  /**
   * The policy source that defines this connection, or null. With `spec`, only when the stored
   * connection is the organization's (same URL, or command and arguments), not a namesake.
   */
  managedBy(name: string, spec?: ConnectionSpec): string | null {
    const managed = this.policy?.managedConnections.find((entry) => entry.name === name);
    if (managed === undefined) return null;
    if (spec !== undefined && !isManagedConnection(managed, spec)) return null;
    return this.policy!.settings.get('managedConnections')?.sources.join(', ') ?? null;
  }

  /**
   * Lists the server's tools now; a failure is recorded as the connection's health, which the view
   * shows. A server the policy no longer allows is refused with the reason and not started.
   */
  check(store: NamespaceStore, name: string): Promise<ConnectionView> {
    return this.use(store, async (manager) => {
      assertConnectionAllowed(this.policy, name, manager.get(name).spec);
      await manager.discover(name).catch(() => undefined);
      return manager.get(name);
    });
  }

  /**
   * `ward connections tools`: lists the server's tools now, or changes one (enable, disable,
   * re-pin). A server the policy no longer allows is refused with the reason and not started (P5),
   * as the desktop's Check refuses it. `onFailure` hears the last of a failed local server's stderr.
   */
  tools(store: NamespaceStore, name: string, change: ToolChange | null, onFailure?: (stderr: string) => void): Promise<ToolListing> {
    return this.use(store, async (manager) => {
      assertConnectionAllowed(this.policy, name, manager.get(name).spec);
      let unusable: ToolListing['unusable'] = [];
      if (change?.action === 'enable' || change?.action === 'disable') manager.setToolEnabled(name, change.tool, change.action === 'enable');
      else if (change?.action === 'repin') await manager.repin(name, change.tool);
      else {
        ({ unusable } = await manager.discover(name).catch((error: unknown) => {
          onFailure?.(manager.stderr(name));
          throw error;
        }));
      }
      return { view: manager.get(name), unusable };
    });
  }

  /** The next call to the server needs a new sign-in. */
  signOut(store: NamespaceStore, name: string): Promise<ConnectionView> {
    return this.use(store, async (manager) => {
      await manager.signOut(name);
      return manager.get(name);
    });
  }

  signIn(store: NamespaceStore, name: string, options: Parameters<ConnectionManager['login']>[1]): Promise<ConnectionView> {
    return this.use(store, async (manager) => {
      await manager.login(name, options);
      return manager.get(name);
    });
  }
}
