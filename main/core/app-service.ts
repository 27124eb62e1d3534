/**
 * What the desktop window may ask of the core, one method per IPC channel (STYLE #5).
 * Electron-free: the Electron IPC handlers and the Chromium test bridge both call it through
 * main/ipc/dispatch.ts. Everything it returns is renderer-visible, so nothing here ever returns
 * a secret or a capability (U3, C3).
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type {
  AgentView,
  ApprovalAnswer,
  ConnectionView,
  ConversationView,
  JournalEventView,
  NamespaceView,
  ParsedPayload,
  PendingApprovalView,
  PushedEvent,
  RunView,
  SettingsView,
} from '../../preload/contract.js';
import { openConnections, type ConnectionManager } from '../connections/index.js';
import { parseToolSelector, pinConnectionTools } from '../agents/service.js';
import { connectionPort, toWindowView } from '../connections/port.js';
import { DEFAULT_AGENT, DEFAULT_AGENT_SPEC, parseAgentSpec, toolSource, type AgentSpec } from '../agents/spec.js';
import { deleteModelCredential, inferKind, modelCredentialStatus, resolveModelCredential as resolveStoredCredential, setModelCredential } from '../credentials/model-credential.js';
import { configuredStoreKind, openSecretStore } from '../credentials/open-store.js';
import { ApprovalQueue } from '../ipc/approval-queue.js';
import type { Handlers } from '../ipc/dispatch.js';
import { DEFAULT_PROMPT_TIMEOUT_MS } from '../permissions/run-permissions.js';
import { namespaceDir, parseNamespace, resolveNamespace, type Namespace } from '../namespaces/namespace.js';
import { GrantStore } from '../permissions/grant-store.js';
import { parsePermissionFlags } from '../permissions/grants.js';
import { assertConnectionAllowed, assertProviderAllowed, assertRulesAllowed, loadPolicy, type AdminPolicy } from '../policy/policy.js';
import type { JournalEvent } from '../store/journal.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { Run } from '../store/runs.js';
import { WardError } from './errors.js';
import { checkBaseUrl, PROFILES_FILE, resolveModelProfile } from './run-provider.js';
import { Broker } from '../broker/broker.js';
import { RunService, type RunServiceOptions } from './run-service.js';
import type { WardCore } from './ward-core.js';

/** Whoever is calling: one window (or test page). Its subscriptions end with `releaseClient`. */
export interface Client {
  readonly id: string;
  push(event: PushedEvent): void;
}

/** The run loop, as the window needs it (implemented by the run service). */
export interface RunPort {
  startTurn(request: { namespace: Namespace; conversationId: string; requestId: string; prompt: string }): Promise<{ runId: string; attached: boolean }>;
  stop(request: { namespace: Namespace; runId: string }): Promise<void>;
}

/** Approvals waiting for the person (P3), implemented by the permissions service. */
export interface ApprovalPort {
  pending(namespace: Namespace): PendingApprovalView[];
  answer(namespace: Namespace, approvalId: string, answer: ApprovalAnswer): void;
  /** Called with the namespace name whenever its pending set changes; returns unsubscribe. */
  onChange(listener: (namespace: string) => void): () => void;
}

export interface ConnectionPort {
  list(namespace: Namespace): Promise<ConnectionView[]>;
}

/** Where the model key lives (the OS keychain); it is written and cleared, never read back here. */
export interface ModelKeyPort {
  has(namespace: Namespace): Promise<boolean>;
  set(namespace: Namespace, key: string): Promise<void>;
  clear(namespace: Namespace): Promise<void>;
}

/** Asks the person, then opens the system browser; false when they declined. */
export type ExternalOpener = (url: URL) => Promise<boolean>;
/** Opens a sign-in page the person asked for (no extra confirmation; http/https only). */
export type SignInBrowser = (url: URL) => Promise<void>;

export interface AppPorts {
  /** Ward's environment, for the model profile defaults it may supply (never secrets). */
  readonly env?: NodeJS.ProcessEnv;
  /** Admin policy (P5): caps providers and connections; may fix the namespace. */
  readonly policy?: AdminPolicy | null;
  /** The only namespace this Ward may use (admin policy or WARD_NAMESPACE); others fail closed (N1). */
  readonly fixedNamespace?: string;
  readonly runs?: RunPort;
  readonly approvals?: ApprovalPort;
  readonly connections?: ConnectionPort;
  readonly modelKey?: ModelKeyPort;
  readonly openExternal?: ExternalOpener;
  readonly openSignIn?: SignInBrowser;
}

/** The run service as a RunPort: a turn runs on in the background; the window follows the journal. */
export function runPortFor(service: Pick<RunService, 'startTurn' | 'stop'>): RunPort {
  return {
    async startTurn({ namespace, conversationId, requestId, prompt }) {
      const handle = service.startTurn({ namespace, conversationId, requestId, prompt });
      void handle.done.catch(() => undefined);
      return { runId: handle.runId, attached: handle.attached };
    },
    async stop({ runId }) {
      // Returns once the stop is requested; "Stopped" arrives through the journal after the drain.
      void service.stop(runId).catch(() => undefined);
    },
  };
}

/**
 * The model credential for the desktop's runs: the namespace's stored key (set in Settings)
 * wins; only when none is stored, Ward's environment. An unreachable store is an error (C1).
 */
export function storedModelCredential(home: string): NonNullable<RunServiceOptions['resolveCredential']> {
  return async (ns, env) => {
    const credential = await resolveStoredCredential(ns, env, { home });
    return credential.variable === 'ANTHROPIC_API_KEY' ? { kind: 'api_key', value: credential.value } : { kind: 'oauth_token', value: credential.value };
  };
}

/** The model key in the namespace's secret store (the OS keychain by default, C1). */
export function modelKeyInSecretStore(home: string): ModelKeyPort {
  return {
    has: async (ns) => (await modelCredentialStatus(openSecretStore(home, ns))).set,
    set: (ns, key) => setModelCredential(openSecretStore(home, ns), inferKind(key), key),
    clear: async (ns) => {
      await deleteModelCredential(openSecretStore(home, ns));
    },
  };
}

const DEFAULT_PROFILE = 'default';

export interface DesktopCore {
  readonly app: AppService;
  readonly runs: RunService;
  /** Stops every run (waiting for tool drain), then closes the broker. */
  close(): Promise<void>;
}

/** The composition the desktop window uses (Electron main and the Chromium test harness alike). */
export async function startDesktopCore(options: {
  core: WardCore;
  env: NodeJS.ProcessEnv;
  openExternal?: ExternalOpener;
  openSignIn?: SignInBrowser;
  connections?: ConnectionPort;
  modelKey?: ModelKeyPort;
  runOptions?: Partial<RunServiceOptions>;
}): Promise<DesktopCore> {
  // A malformed policy or conflicting namespace settings stop the app here (fail closed).
  const policy = loadPolicy(options.env);
  const fixed = options.env.WARD_NAMESPACE || policy?.namespace ? resolveNamespace({ env: options.env.WARD_NAMESPACE, policy: policy?.namespace ?? undefined }).name : undefined;
  const broker = await Broker.start();
  const approvals = new ApprovalQueue(options.runOptions?.promptTimeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS);
  const runs = new RunService({
    core: options.core,
    broker,
    env: options.env,
    prompter: approvals,
    policy,
    resolveCredential: storedModelCredential(options.core.home),
    ...options.runOptions,
  });
  const app = new AppService(options.core, {
    env: options.env,
    policy,
    fixedNamespace: fixed,
    runs: runPortFor(runs),
    openExternal: options.openExternal,
    openSignIn: options.openSignIn,
    approvals,
    connections: options.connections ?? connectionPort(options.core),
    modelKey: options.modelKey ?? modelKeyInSecretStore(options.core.home),
  });
  return {
    app,
    runs,
    close: async () => {
      await runs.stopAll();
      await broker.close();
    },
  };
}
/** Events pushed per message: big replays go in pages so one push never holds the whole journal. */
const PUSH_BATCH = 1_000;
/** The first replay page is small: it is all the window needs to paint. */
const FIRST_PAGE = 100;
const REDACTED = '[redacted]';
/** A window follows a few conversations at a time; more is a leak or abuse (L1). */
export const MAX_SUBSCRIPTIONS_PER_CLIENT = 64;
/** Field names that could carry a credential; redacted from journal payloads before they leave main. */
const SECRET_KEY = /^(authorization|capability|cap|token|access_?token|refresh_?token|id_?token|api_?key|secret|password|client_?secret|bearer)$/i;

export function redactPayload(value: unknown, depth = 0): unknown {
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactPayload(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_KEY.test(key) ? REDACTED : redactPayload(item, depth + 1);
  }
  return out;
}

function toEventView(event: JournalEvent): JournalEventView {
  return { seq: event.seq, runId: event.runId, type: event.type, payload: redactPayload(event.payload), createdAt: event.createdAt };
}

function toRunView(run: Run): RunView {
  return { id: run.id, state: run.state, reason: run.reason, updatedAt: run.updatedAt };
}

/** Only http and https links may leave the app, and only as parsed URLs. */
export function parseExternalUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WardError('usage', 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WardError('usage', `only http and https links open outside Ward, not ${url.protocol.slice(0, 20)}`);
  }
  return url;
}

interface Subscription {
  readonly clientId: string;
  stop: () => void;
}

export class AppService {
  private readonly subscriptions = new Map<string, Subscription>();

  constructor(
    private readonly core: WardCore,
    private readonly ports: AppPorts = {},
  ) {}

  /** Handlers for every contract channel; TypeScript checks none is missing. */
  readonly handlers: Handlers = {
    'namespaces.list': () => this.listNamespaces(),
    'namespaces.create': ({ name }) => {
      if (this.ports.fixedNamespace !== undefined) throw this.fixedNamespaceError(name);
      return { name: this.core.createNamespace(name).name };
    },
    'conversations.list': ({ namespace, query }) => this.listConversations(namespace, query),
    'conversations.get': ({ namespace, conversationId }) => this.conversationView(this.store(namespace), conversationId),
    'conversations.create': (payload) => this.createConversation(payload),
    'journal.subscribe': (payload, client) => this.subscribeJournal(payload, client),
    'journal.unsubscribe': ({ subscriptionId }, client) => this.unsubscribe(subscriptionId, client),
    'runs.send': (payload) => this.send(payload),
    'runs.stop': (payload) => this.stop(payload),
    'runs.reconcile': (payload) => this.reconcile(payload),
    'approvals.list': ({ namespace }) => this.ports.approvals?.pending(this.requireNamespace(namespace)) ?? [],
    'approvals.answer': ({ namespace, approvalId, answer }) => {
      if (this.ports.approvals === undefined) throw new WardError('not_found', `no pending approval ${approvalId}`);
      this.ports.approvals.answer(this.requireNamespace(namespace), approvalId, answer);
      return null;
    },
    'approvals.watch': ({ namespace }, client) => this.watchApprovals(namespace, client),
    'agents.list': ({ namespace }) => {
      const store = this.store(namespace);
      return store.agents.list().map((agent) => this.agentView(agent, store));
    },
    'agents.publish': (payload) => this.publishAgent(payload),
    'agents.grant': ({ namespace, name, effect, kind, entries }) => {
      const store = this.store(namespace);
      const agent = store.agents.get(name);
      const rules = parsePermissionFlags([`--${effect}-${kind}=${entries}`], os.homedir(), 'agent');
      assertRulesAllowed(this.ports.policy ?? null, rules);
      const grants = new GrantStore(store.db);
      for (const rule of rules) grants.add({ scope: 'agent', agentId: agent.agentId, effect: rule.effect, kind: rule.kind, value: rule.value, grantedBy: 'desktop' });
      return this.agentView(agent, store);
    },
    'agents.revokeGrant': ({ namespace, name, grantId }) => {
      const store = this.store(namespace);
      const agent = store.agents.get(name);
      const grants = new GrantStore(store.db);
      const grant = grants.list({ agentId: agent.agentId }).find((candidate) => candidate.id === grantId && candidate.scope === 'agent');
      if (grant === undefined) throw new WardError('not_found', `agent ${name} has no grant ${grantId}`);
      grants.revoke(grant.id);
      return this.agentView(agent, store);
    },
    'connections.list': async ({ namespace }) => (await this.ports.connections?.list(this.requireNamespace(namespace))) ?? [],
    'connections.add': ({ namespace, name, url }) =>
      this.withConnections(namespace, async (manager) => {
        assertConnectionAllowed(this.ports.policy ?? null, name);
        await manager.add({ name, transport: 'http', url });
        return toWindowView(manager.get(name));
      }),
    'connections.check': ({ namespace, name }) =>
      this.withConnections(namespace, async (manager) => {
        try {
          await manager.discover(name);
        } catch {
          // The failure is recorded as the connection's health, which the view shows.
        }
        return toWindowView(manager.get(name));
      }),
    'connections.signIn': ({ namespace, name }) =>
      this.withConnections(namespace, async (manager) => {
        const open = this.ports.openSignIn;
        if (open === undefined) throw new WardError('unavailable', 'signing in needs a browser, which is not available here');
        await manager.login(name, { openBrowser: (url) => open(parseExternalUrl(url.href)) });
        return toWindowView(manager.get(name));
      }),
    'connections.remove': ({ namespace, name }) =>
      this.withConnections(namespace, async (manager) => {
        if (!(await manager.remove(name))) throw new WardError('not_found', `no connection ${name}`);
        return null;
      }),
    'settings.get': ({ namespace }) => this.settings(namespace),
    'settings.setModelProvider': ({ namespace, baseUrl, model }) => {
      this.writeDefaultProfile(this.requireNamespace(namespace), baseUrl, model);
      return this.settings(namespace);
    },
    'settings.setKey': async ({ namespace, key }) => {
      await this.modelKey().set(this.requireNamespace(namespace), key);
      return this.settings(namespace);
    },
    'settings.clearKey': async ({ namespace }) => {
      await this.modelKey().clear(this.requireNamespace(namespace));
      return this.settings(namespace);
    },
    'links.openExternal': async ({ url }) => {
      const parsed = parseExternalUrl(url);
      if (this.ports.openExternal === undefined) throw new WardError('unavailable', 'opening links is not available here');
      return { opened: await this.ports.openExternal(parsed) };
    },
  };

  /** Ends every subscription a window held (it closed or reloaded). */
  releaseClient(clientId: string): void {
    for (const [id, subscription] of this.subscriptions) {
      if (subscription.clientId === clientId) {
        subscription.stop();
        this.subscriptions.delete(id);
      }
    }
  }

  subscriptionCount(): number {
    return this.subscriptions.size;
  }

  private async withConnections<T>(namespace: string, action: (manager: ConnectionManager) => Promise<T>): Promise<T> {
    const manager = openConnections(this.core, this.requireNamespace(namespace));
    try {
      return await action(manager);
    } finally {
      await manager.close();
    }
  }

  private requireNamespace(name: string): Namespace {
    return this.store(name).namespace;
  }

  private store(name: string): NamespaceStore {
    const fixed = this.ports.fixedNamespace;
    if (fixed !== undefined && name !== fixed) throw this.fixedNamespaceError(name);
    // A namespace fixed by the admin is not a typo: it comes into being on first use.
    return this.core.store(parseNamespace(name), { mustExist: fixed === undefined });
  }

  private fixedNamespaceError(name: string): WardError {
    return new WardError('namespace_conflict', `this Ward is fixed to namespace ${this.ports.fixedNamespace} (admin policy or WARD_NAMESPACE); ${JSON.stringify(name.slice(0, 40))} is not available`);
  }

  private listNamespaces(): NamespaceView[] {
    if (this.ports.fixedNamespace !== undefined) return [{ name: this.ports.fixedNamespace }];
    const names = new Set(this.core.listNamespaces().map((ns) => ns.name));
    names.add('default');
    return [...names].sort().map((name) => ({ name }));
  }

  private conversationView(store: NamespaceStore, id: string): ConversationView {
    const conversation = store.conversations.get(id);
    const active = store.runs.activeFor(id);
    let agentName = conversation.agentId;
    try {
      agentName = store.agents.getById(conversation.agentId, conversation.agentVersion).agentName;
    } catch {
      // A conversation always references a published version; keep the id if that ever fails.
    }
    return {
      id: conversation.id,
      title: conversation.title,
      agentName,
      agentVersion: conversation.agentVersion,
      createdAt: conversation.createdAt,
      lastSeq: conversation.lastSeq,
      activeRun: active === undefined ? null : toRunView(active),
    };
  }

  private listConversations(namespace: string, query: string | undefined): ConversationView[] {
    const store = this.store(namespace);
    const needle = query?.trim().toLowerCase() ?? '';
    return store.conversations
      .list()
      .map((conversation) => this.conversationView(store, conversation.id))
      .filter((view) => needle === '' || view.title.toLowerCase().includes(needle) || view.agentName.includes(needle) || view.id.startsWith(needle));
  }

  private createConversation({ namespace, agentName, title }: ParsedPayload<'conversations.create'>): ConversationView {
    const store = this.store(namespace);
    // The built-in agent comes into being on first use, as with `ward run`.
    const agent = agentName === DEFAULT_AGENT && store.agents.find(DEFAULT_AGENT) === undefined ? store.agents.publish(DEFAULT_AGENT, DEFAULT_AGENT_SPEC) : store.agents.get(agentName);
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title });
    return this.conversationView(store, conversation.id);
  }

  /**
   * Replays from the cursor in pages, one per tick, so the window paints the first page while the
   * rest is still being read; then follows live appends from wherever the replay ended (J1).
   */
  private subscribeJournal({ namespace, conversationId, afterSeq }: ParsedPayload<'journal.subscribe'>, client: Client): { subscriptionId: string } {
    const store = this.store(namespace);
    store.conversations.get(conversationId);
    this.checkSubscriptionLimit(client);
    const subscriptionId = randomUUID();
    const subscription: Subscription = { clientId: client.id, stop: () => undefined };
    this.subscriptions.set(subscriptionId, subscription);
    const active = () => this.subscriptions.get(subscriptionId) === subscription;
    const push = (events: JournalEventView[]) => {
      if (events.length > 0 && active()) client.push({ kind: 'journal', subscriptionId, events });
    };

    const history = store.journal.read(conversationId, afterSeq, PUSH_BATCH);
    let cursor = afterSeq;
    let pageSize = FIRST_PAGE;
    const replayPage = () => {
      if (!active()) return;
      const page: JournalEventView[] = [];
      try {
        while (page.length < pageSize) {
          const next = history.next();
          if (next.done) break;
          page.push(toEventView(next.value));
        }
      } catch (error) {
        // The store closed (Ward is quitting) or broke: this subscription ends; the page resubscribes on reload.
        console.error('ward: journal replay ended', error);
        this.subscriptions.delete(subscriptionId);
        return;
      }
      if (page.length > 0) cursor = page[page.length - 1]!.seq;
      push(page);
      if (page.length === pageSize) {
        pageSize = PUSH_BATCH;
        setImmediate(replayPage);
      } else follow();
    };
    const follow = () => {
      // Live events are coalesced per tick (the run loop appends in bursts).
      let batch: JournalEventView[] = [];
      let scheduled = false;
      subscription.stop = store.journal.subscribe(conversationId, cursor, (event) => {
        batch.push(toEventView(event));
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          const events = batch;
          batch = [];
          for (let start = 0; start < events.length; start += PUSH_BATCH) push(events.slice(start, start + PUSH_BATCH));
        });
      });
    };
    // The id goes back before the first push.
    setImmediate(replayPage);
    return { subscriptionId };
  }

  private unsubscribe(subscriptionId: string, client: Client): null {
    const subscription = this.subscriptions.get(subscriptionId);
    if (subscription === undefined || subscription.clientId !== client.id) throw new WardError('not_found', `no subscription ${subscriptionId}`);
    subscription.stop();
    this.subscriptions.delete(subscriptionId);
    return null;
  }

  private checkSubscriptionLimit(client: Client): void {
    let held = 0;
    for (const subscription of this.subscriptions.values()) if (subscription.clientId === client.id) held++;
    if (held >= MAX_SUBSCRIPTIONS_PER_CLIENT) {
      throw new WardError('usage', `this window already holds ${MAX_SUBSCRIPTIONS_PER_CLIENT} subscriptions; unsubscribe before adding more`);
    }
  }

  private watchApprovals(namespace: string, client: Client): { subscriptionId: string } {
    const ns = this.requireNamespace(namespace);
    this.checkSubscriptionLimit(client);
    const subscriptionId = randomUUID();
    const approvals = this.ports.approvals;
    const push = () => {
      if (this.subscriptions.has(subscriptionId)) client.push({ kind: 'approvals', subscriptionId, pending: approvals?.pending(ns) ?? [] });
    };
    const stop = approvals?.onChange((changed) => {
      if (changed === ns.name) push();
    });
    this.subscriptions.set(subscriptionId, { clientId: client.id, stop: stop ?? (() => undefined) });
    setImmediate(push);
    return { subscriptionId };
  }

  private runs(): RunPort {
    if (this.ports.runs === undefined) throw new WardError('unavailable', 'runs are not available in this build');
    return this.ports.runs;
  }

  private async send({ namespace, conversationId, requestId, prompt }: ParsedPayload<'runs.send'>): Promise<{ runId: string; attached: boolean }> {
    const ns = this.requireNamespace(namespace);
    return this.runs().startTurn({ namespace: ns, conversationId, requestId, prompt });
  }

  private async stop({ namespace, runId }: ParsedPayload<'runs.stop'>): Promise<RunView> {
    const store = this.store(namespace);
    store.runs.get(runId);
    await this.runs().stop({ namespace: store.namespace, runId });
    return toRunView(store.runs.get(runId));
  }

  private reconcile({ namespace, runId, outcome, note }: ParsedPayload<'runs.reconcile'>): RunView {
    const store = this.store(namespace);
    const run = store.runs.reconcile(runId, outcome, note);
    store.journal.append(run.conversationId, { type: 'run_reconciled', runId, payload: { state: run.state, note } });
    return toRunView(run);
  }

  private agentView(agent: { agentId: string; agentName: string; version: number; publishedAt: string; spec: unknown }, store: NamespaceStore): AgentView {
    const permissions = new GrantStore(store.db)
      .list({ agentId: agent.agentId })
      .filter((grant) => grant.scope === 'agent' && grant.revokedAt === null)
      .map((grant) => ({ id: grant.id, effect: grant.effect, kind: grant.kind, value: grant.value, grantedBy: grant.grantedBy }));
    let spec: AgentSpec;
    try {
      spec = parseAgentSpec(agent.spec);
    } catch {
      // One unreadable version must not hide the others; it cannot be run either.
      return { name: agent.agentName, version: agent.version, publishedAt: agent.publishedAt, instructions: '', modelProfile: 'default', tools: [], permissions };
    }
    return {
      permissions,
      name: agent.agentName,
      version: agent.version,
      publishedAt: agent.publishedAt,
      instructions: spec.instructions,
      modelProfile: spec.modelProfile,
      tools: spec.tools.map((tool) => ({ name: tool.exposedName, upstream: toolSource(tool), description: tool.description.slice(0, 500) })),
    };
  }

  private async publishAgent({ namespace, name, instructions, keepTools, addTools = [] }: ParsedPayload<'agents.publish'>): Promise<AgentView> {
    const store = this.store(namespace);
    const latest = store.agents.find(name);
    const base: AgentSpec = latest === undefined ? { ...DEFAULT_AGENT_SPEC, instructions } : parseAgentSpec(latest.spec);
    const pinned = new Set(base.tools.map((tool) => tool.exposedName));
    const unknown = keepTools.filter((tool) => !pinned.has(tool));
    if (unknown.length > 0) {
      throw new WardError('usage', `${unknown.slice(0, 5).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not pinned in agent ${name}; pin new tools with "ward agents create"`);
    }
    const selectors = addTools.map(parseToolSelector);
    const added = selectors.length === 0 ? [] : await this.withConnections(namespace, (manager) => pinConnectionTools(manager, selectors));
    const spec = parseAgentSpec({ ...base, instructions, tools: [...base.tools.filter((tool) => keepTools.includes(tool.exposedName)), ...added] });
    return this.agentView(store.agents.publish(name, spec), store);
  }

  private modelKey(): ModelKeyPort {
    if (this.ports.modelKey === undefined) throw new WardError('unavailable', 'no credential store is configured for the model key');
    return this.ports.modelKey;
  }

  /** Writes the namespace's "default" model profile, the file the run service reads (L1 checks first). */
  private writeDefaultProfile(ns: Namespace, baseUrl: string, model: string): void {
    const checked = checkBaseUrl(baseUrl, false, 'model provider');
    assertProviderAllowed(this.ports.policy ?? null, checked);
    const file = path.join(namespaceDir(this.core.home, ns), PROFILES_FILE);
    let profiles: Record<string, unknown> = {};
    if (fs.existsSync(file)) {
      try {
        profiles = (JSON.parse(fs.readFileSync(file, 'utf8')) as { profiles?: Record<string, unknown> }).profiles ?? {};
      } catch (error) {
        throw new WardError('invalid_config', `${file} is not valid JSON; fix or remove it first`, { cause: error });
      }
    }
    const next = { profiles: { ...profiles, [DEFAULT_PROFILE]: { baseUrl: checked, model } } };
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(temp, file);
  }

  private async settings(namespace: string): Promise<SettingsView> {
    const ns = this.requireNamespace(namespace);
    const profile = resolveModelProfile(this.core.home, ns, DEFAULT_PROFILE, this.ports.env ?? {});
    return {
      dataFolder: this.core.home,
      modelProvider: { baseUrl: profile.baseUrl, model: profile.model },
      keySet: (await this.ports.modelKey?.has(ns)) ?? false,
      keyStore: configuredStoreKind(this.core.home),
    };
  }
}
