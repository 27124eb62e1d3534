/**
 * The connections of one namespace: registry, secrets, live sessions, sign-in, discovery and
 * pinning, and the UpstreamCaller the broker routes pinned tools through.
 */
import type { PinnedToolRoute, ToolOutcome, UpstreamCaller } from '../upstreams/types.js';
import type { CallErrorCode } from '../upstreams/call-errors.js';
import { WardError } from '../base/errors.js';
import type { SecretStore } from '../credentials/secret-store.js';
import { BoundedLog } from '../upstreams/stdio-transport.js';
import { UpstreamError, classifyUpstreamError, failedOutcome } from '../upstreams/errors.js';
import type { Elicitor } from '../upstreams/elicitation.js';
import { DEFAULT_LIMITS, McpSession, type SessionLimits, type SessionTarget, type ToolListing } from '../upstreams/session.js';
import { exposedToolName, parseConnectionName, parseConnectionSpec, unusableToolName, type ConnectionSpec } from './config.js';
import { ConnectionOAuthProvider, oauthAccounts } from './oauth.js';
import { ConnectionRegistry, type ConnectionRecord, type ToolPin } from './registry.js';
import { secretEnvAccount, sessionTarget, type ConfineServer } from './session-target.js';
import { signIn, type OpenBrowser } from './sign-in.js';
import { connectionTools, pinAsLive, pinnedRoutes, resolveRoutes, toolNamed } from './tool-routes.js';

export { secretEnvAccount, type ConfineServer, type StdioCommand } from './session-target.js';


const BACKOFF_BASE_MS = 1_000;
const BACKOFF_MAX_MS = 60_000;
const CONNECTION_FAILURES: ReadonlySet<string> = new Set(['not_signed_in', 'unauthorized', 'forbidden', 'insufficient_scope', 'unreachable', 'closed', 'protocol_error']);
/** Failures only a new sign-in mends: the connection shows as signed out. */
const SIGN_IN_AGAIN: ReadonlySet<string> = new Set(['not_signed_in', 'unauthorized', 'insufficient_scope']);

export interface ConnectionManagerOptions {
  readonly registry: ConnectionRegistry;
  readonly secrets: SecretStore;
  /** The namespace folder (locks for compare-before-delete). */
  readonly namespaceDir: string;
  readonly limits?: Partial<SessionLimits>;
  /** Asks the person when a connection's server elicits input during a call (a run's); absent, elicitations are declined. */
  readonly elicit?: (connection: string) => Elicitor;
  /** Ward's Client ID Metadata Document URL (admin policy or settings), used where an authorization server supports it. */
  readonly clientMetadataUrl?: string;
  /** Clock for restart back-off. */
  readonly now?: () => number;
  /** Starts servers that asked for the sandbox; absent, they are refused. */
  readonly confine?: ConfineServer;
  /** Why a local server without a sandbox profile may not start (the admin policy says so); absent, it may. */
  readonly unsandboxedRefusal?: string;
}

interface CrashRecord {
  readonly failure: UpstreamError;
  readonly at: number;
  readonly count: number;
}

export interface ConnectionView extends ConnectionRecord {
  readonly tools: readonly ToolPin[];
  /** A stdio server that ended on its own and waits for an explicit restart. */
  readonly crashed: { readonly code: string; readonly detail: string; readonly retryAt: number } | null;
}

export interface Discovery {
  readonly pins: readonly ToolPin[];
  readonly unusable: ToolListing['unusable'];
}

export class ConnectionManager {
  readonly registry: ConnectionRegistry;
  private readonly limits: SessionLimits;
  private readonly live = new Map<string, Promise<McpSession>>();
  private readonly providers = new Map<string, ConnectionOAuthProvider>();
  private readonly crashes = new Map<string, CrashRecord>();
  private readonly streaks = new Map<string, number>();
  /** Connections this manager last recorded as healthy, so a successful call writes health only when it changes. */
  private readonly healthy = new Set<string>();
  /** The stderr of each stdio server's latest session, kept after it ends so a failure can be diagnosed. */
  private readonly stderrLogs = new Map<string, BoundedLog>();
  private closed = false;

  constructor(private readonly options: ConnectionManagerOptions) {
    this.registry = options.registry;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /**
   * Adds a connection; secret env values and a pre-registered client's secret go to the keychain
   * first, so a failed write leaves no half-made entry.
   */
  async add(input: unknown, secretValues: Readonly<Record<string, string>> = {}, clientSecret?: string): Promise<ConnectionRecord> {
    const spec = parseConnectionSpec(input);
    if (this.registry.has(spec.name)) throw new WardError('usage', `a connection named ${spec.name} already exists; remove it first`);
    if (clientSecret !== undefined) {
      if (spec.transport !== 'http' || spec.clientId === null) throw new WardError('usage', 'a client secret belongs to a remote connection with a client id (--client-id)');
      if (clientSecret === '' || clientSecret.length > 4096 || /[\u0000-\u001f\u007f]/.test(clientSecret)) throw new WardError('invalid_config', 'the client secret must be 1 to 4096 characters without control characters');
      await this.options.secrets.set(oauthAccounts(spec.name).clientSecret, clientSecret);
    }
    const names = spec.transport === 'stdio' ? spec.secretEnv : [];
    for (const given of Object.keys(secretValues)) {
      if (!names.includes(given)) throw new WardError('invalid_config', `connection secretEnv: a value was given for ${given}, which is not listed`);
    }
    for (const variable of names) {
      const value = secretValues[variable];
      if (value === undefined || value === '') throw new WardError('invalid_config', `connection secretEnv: no value given for ${variable}`);
      await this.options.secrets.set(secretEnvAccount(spec.name, variable), value);
    }
    return this.registry.add(spec);
  }

  /** Stops the connection, deletes its secrets and tokens, and forgets it. */
  async remove(name: string): Promise<boolean> {
    const record = this.registry.has(parseConnectionName(name)) ? this.registry.get(name) : undefined;
    await this.disconnect(name);
    this.crashes.delete(name);
    this.streaks.delete(name);
    this.stderrLogs.delete(name);
    this.providers.delete(name);
    if (record === undefined) return false;
    const accounts = oauthAccounts(name);
    const names = record.spec.transport === 'stdio' ? record.spec.secretEnv : [];
    for (const account of [accounts.tokens, accounts.client, accounts.clientSecret, ...names.map((variable) => secretEnvAccount(name, variable))]) {
      await this.options.secrets.delete(account);
    }
    return this.registry.remove(name);
  }

  /** Forgets the connection's sign-in (its tokens; its client registration stays) and closes its session. */
  async signOut(name: string): Promise<void> {
    this.registry.get(name);
    await this.disconnect(name);
    this.providers.delete(name);
    await this.options.secrets.delete(oauthAccounts(name).tokens);
    this.registry.setHealth(name, 'not_signed_in', 'not_signed_in');
  }

  list(): ConnectionView[] {
    return this.registry.list().map((record) => this.view(record));
  }

  get(name: string): ConnectionView {
    return this.view(this.registry.get(name));
  }

  private view(record: ConnectionRecord): ConnectionView {
    const crash = this.crashes.get(record.spec.name);
    return {
      ...record,
      tools: this.registry.tools(record.spec.name),
      crashed: crash === undefined ? null : { code: crash.failure.code, detail: crash.failure.detail, retryAt: crash.at + backoff(crash.count) },
    };
  }

  private provider(spec: Extract<ConnectionSpec, { transport: 'http' }>): ConnectionOAuthProvider {
    let provider = this.providers.get(spec.name);
    if (provider === undefined) {
      provider = new ConnectionOAuthProvider({
        connection: spec.name,
        serverUrl: new URL(spec.url),
        allowInsecureHttp: spec.allowInsecureHttp,
        clientId: spec.clientId,
        ...(this.options.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: this.options.clientMetadataUrl }),
        secrets: this.options.secrets,
        namespaceDir: this.options.namespaceDir,
      });
      this.providers.set(spec.name, provider);
    }
    return provider;
  }

  private target(spec: ConnectionSpec): Promise<SessionTarget> {
    const { registry, secrets, confine, unsandboxedRefusal } = this.options;
    return sessionTarget(spec, {
      registry,
      secrets,
      ...(confine === undefined ? {} : { confine }),
      ...(unsandboxedRefusal === undefined ? {} : { unsandboxedRefusal }),
      stderr: () => {
        const log = new BoundedLog(this.limits.maxStderrBytes);
        this.stderrLogs.set(spec.name, log);
        return log;
      },
      provider: (http) => this.provider(http),
    });
  }

  /**
   * The live session of a connection, opened on first use. A stdio server that ended on its
   * own is not started again here: that takes an explicit restart() (with back-off).
   */
  connection(name: string): Promise<McpSession> {
    if (this.closed) return Promise.reject(new UpstreamError('closed', 'Ward is shutting down'));
    const existing = this.live.get(name);
    if (existing !== undefined) return existing;
    const crash = this.crashes.get(name);
    if (crash !== undefined) {
      return Promise.reject(new UpstreamError('unreachable', `the server stopped (${crash.failure.detail}); restart the connection to use it again`));
    }
    const opening = this.open(name);
    this.live.set(name, opening);
    opening.catch(() => {
      if (this.live.get(name) === opening) this.live.delete(name);
    });
    return opening;
  }

  private async open(name: string): Promise<McpSession> {
    const record = this.registry.get(name);
    let connection: McpSession;
    try {
      connection = await McpSession.open(() => this.target(record.spec), this.limits, (tool) => unusableToolName(name, tool), this.options.elicit?.(name));
    } catch (error) {
      const failure = classifyUpstreamError(error);
      this.noteFailure(name, failure.code);
      throw failure;
    }
    const openedAt = this.now();
    connection.onEnd((failure) => {
      this.live.delete(name);
      this.noteFailure(name, failure.code);
      if (record.spec.transport === 'stdio') {
        // Crashes "in a row": a session that ran longer than the longest back-off starts the count afresh.
        const now = this.now();
        const streak = now - openedAt < BACKOFF_MAX_MS ? (this.streaks.get(name) ?? 0) : 0;
        this.streaks.set(name, streak + 1);
        this.crashes.set(name, { failure, at: now, count: streak + 1 });
      }
    });
    return connection;
  }

  private noteFailure(name: string, code: string): void {
    this.healthy.delete(name);
    if (!this.registry.has(name)) return;
    const health = SIGN_IN_AGAIN.has(code) ? 'not_signed_in' : 'error';
    this.registry.setHealth(name, health, code);
  }

  /** Explicitly starts a stopped server again; refused while its back-off runs (1 s, doubling to 60 s per crash). */
  async restart(name: string): Promise<McpSession> {
    const crash = this.crashes.get(name);
    if (crash !== undefined) {
      const retryAt = crash.at + backoff(crash.count);
      const wait = retryAt - this.now();
      if (wait > 0) throw new WardError('unavailable', `connection ${name} stopped ${crash.count} time(s) in a row; restart it again in ${Math.ceil(wait / 1000)} s`);
    }
    await this.disconnect(name);
    // Kept until the new session is up, so the next crash counts on.
    const opening = this.openAfterRestart(name, crash);
    this.live.set(name, opening);
    opening.catch(() => {
      if (this.live.get(name) === opening) this.live.delete(name);
    });
    return opening;
  }

  private async openAfterRestart(name: string, crash: CrashRecord | undefined): Promise<McpSession> {
    this.crashes.delete(name);
    try {
      return await this.open(name);
    } catch (error) {
      if (crash !== undefined) {
        this.streaks.set(name, crash.count + 1);
        this.crashes.set(name, { failure: classifyUpstreamError(error), at: this.now(), count: crash.count + 1 });
      }
      throw error;
    }
  }

  /** The most recent stderr output of a stdio server (bounded), for the person only: never sent to the model. */
  stderr(name: string): string {
    return this.stderrLogs.get(name)?.text() ?? '';
  }

  /** Closes a live session (stopping a stdio server); the connection stays configured. */
  async disconnect(name: string): Promise<void> {
    const opening = this.live.get(name);
    this.live.delete(name);
    if (opening === undefined) return;
    const connection = await opening.catch(() => undefined);
    await connection?.close();
  }

  /** Lists the server's tools now and records them: new ones pinned, changed ones disabled until re-pinned (B3). */
  async discover(name: string): Promise<Discovery> {
    const connection = await this.connection(name);
    let listing: ToolListing;
    try {
      listing = await connection.listTools();
    } catch (error) {
      const failure = classifyUpstreamError(error);
      this.noteFailure(name, failure.code);
      throw failure;
    }
    const pins = this.registry.sync(name, listing.tools);
    this.registry.setHealth(name, 'ok', null);
    return { pins, unusable: listing.unusable };
  }

  /** Every enabled, pinned tool of every connection, as the broker routes it; agents choose from these. */
  routes(): PinnedToolRoute[] {
    return pinnedRoutes(this.registry);
  }

  /** The routes for tools a person picked for an agent, by exposed name; refused naming why. */
  resolveTools(exposedNames: readonly string[]): PinnedToolRoute[] {
    return resolveRoutes(this.registry, exposedNames);
  }

  async repin(name: string, given: string): Promise<ToolPin> {
    const connection = await this.connection(name);
    const tool = toolNamed(this.registry, name, given);
    const listing = await connection.listTools();
    const live = listing.tools.find((candidate) => candidate.name === tool);
    if (live === undefined) throw new WardError('not_found', `connection ${name} does not offer a tool named ${JSON.stringify(tool.slice(0, 64))} now`);
    if (this.registry.tool(name, tool) === undefined) this.registry.sync(name, [...this.registry.tools(name).map(pinAsLive), live]);
    return this.registry.repin(name, live);
  }

  setToolEnabled(name: string, tool: string, enabled: boolean): ToolPin {
    this.registry.get(name);
    return this.registry.setEnabled(name, toolNamed(this.registry, name, tool), enabled);
  }

  /**
   * Signs in to an HTTP connection through Ward's one loopback callback (main/auth): 127.0.0.1 at
   * a random port, loopback peers and Host only, exactly one callback whose `state` must match (a
   * wrong one fails the sign-in), a bounded wait (C5). It first asks the server without a token,
   * as the MCP authorization spec says: its 401 names where the protected resource metadata is
   * and which scope it wants. The scope asked for is that one together with what the connection
   * was asked for before, widened by any insufficient_scope answer since (step-up). Tokens replace
   * the old ones only on success.
   */
  async login(name: string, options: { openBrowser: OpenBrowser; timeoutMs?: number }): Promise<void> {
    const record = this.registry.get(name);
    if (record.spec.transport !== 'http') throw new WardError('usage', `connection ${name} is a local (stdio) server; only remote (http) connections sign in`);
    const provider = this.provider(record.spec);
    await signIn({ url: record.spec.url, record, provider, limits: this.limits, ...options, signedIn: () => this.registry.signedIn(name, provider.askedScope) });
    // A session opened with the old tokens is replaced by one with the new.
    await this.disconnect(name);
    this.registry.setHealth(name, 'ok', null);
  }

  /** The caller the broker uses for pinned tools: every call re-checks the registry and the live schema (B3, B4). */
  readonly caller: UpstreamCaller = {
    callTool: (route, args, signal) => this.callTool(route, args, signal),
  };

  private refusal(code: CallErrorCode, message: string): ToolOutcome {
    return failedOutcome(new UpstreamError(code, message));
  }

  async callTool(route: PinnedToolRoute, args: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome> {
    const name = route.upstream;
    if (route.exposedName !== exposedToolName(name, route.upstreamName)) return this.refusal('refused', 'the route does not name this connection');
    const pin = this.registry.pinState(name, route.upstreamName);
    if (pin === undefined && !this.registry.has(name)) return this.refusal('refused', `there is no connection named ${name}`);
    if (pin === undefined || pin.status === 'missing') return this.refusal('tool_missing', `connection ${name} has no tool ${route.upstreamName}`);
    if (pin.status === 'schema_changed' || pin.schemaHash !== route.schemaHash) return this.refusal('schema_changed', pin.reason ?? 'the pinned schema differs');
    if (!pin.enabled) return this.refusal('refused', `the tool ${route.upstreamName} is turned off for connection ${name}`);
    let connection: McpSession;
    try {
      connection = await this.connection(name);
    } catch (error) {
      return failedOutcome(classifyUpstreamError(error, { signal }));
    }
    const outcome = await connection.call(route, args, signal);
    if (outcome.ok) {
      if (!this.healthy.has(name)) {
        this.registry.setHealth(name, 'ok', null);
        this.healthy.add(name);
      }
    } else if (outcome.errorCode === 'tool_missing' || outcome.errorCode === 'schema_changed') {
      // The registry learns it too, so the tool shows as disabled until re-pinned.
      const listing = await connection.tools(signal).catch(() => undefined);
      if (listing !== undefined) this.registry.sync(name, connectionTools(listing, this.registry.tools(name)));
    } else if (CONNECTION_FAILURES.has(outcome.errorCode)) {
      // Only failures of the connection itself change its health; a tool's own error does not.
      this.noteFailure(name, outcome.errorCode);
    }
    return outcome;
  }

  /** Stops every live session (and every stdio server). */
  async close(): Promise<void> {
    this.closed = true;
    const names = [...this.live.keys()];
    await Promise.all(names.map((name) => this.disconnect(name)));
  }
}

function backoff(count: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, count - 1), BACKOFF_MAX_MS);
}
