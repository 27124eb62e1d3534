/**
 * What the desktop window may ask of the core, one method per IPC channel (STYLE #5).
 * Electron-free: the Electron IPC handlers and the Chromium test bridge both call it through
 * main/ipc/dispatch.ts. Everything it returns is renderer-visible, so nothing here ever returns
 * a secret or a capability (U3, C3).
 */
import { randomUUID } from 'node:crypto';
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
import type { Handlers } from '../ipc/dispatch.js';
import { parseNamespace, type Namespace } from '../namespaces/namespace.js';
import type { JournalEvent } from '../store/journal.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { Run } from '../store/runs.js';
import { WardError } from './errors.js';
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

export interface AppPorts {
  readonly runs?: RunPort;
  readonly approvals?: ApprovalPort;
  readonly connections?: ConnectionPort;
  readonly modelKey?: ModelKeyPort;
  readonly openExternal?: ExternalOpener;
}

export const DEFAULT_MODEL_PROVIDER = { baseUrl: 'https://api.anthropic.com', model: 'claude-sonnet-4-5' } as const;
const SETTING_BASE_URL = 'settings.model_base_url';
const SETTING_MODEL = 'settings.model';
/** Events pushed per message: big replays go in pages so one push never holds the whole journal. */
const PUSH_BATCH = 1_000;
const REDACTED = '[redacted]';
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

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
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
  stop(): void;
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
    'namespaces.create': ({ name }) => ({ name: this.core.createNamespace(name).name }),
    'conversations.list': ({ namespace, query }) => this.listConversations(namespace, query),
    'conversations.get': ({ namespace, conversationId }) => this.conversationView(this.store(namespace), conversationId),
    'conversations.create': (payload) => this.createConversation(payload),
    'journal.subscribe': (payload, client) => this.subscribeJournal(payload, client),
    'journal.unsubscribe': ({ subscriptionId }, client) => this.unsubscribe(subscriptionId, client),
    'runs.send': (payload) => this.send(payload),
    'runs.stop': (payload) => this.stop(payload),
    'runs.reconcile': (payload) => this.reconcile(payload),
    'approvals.list': ({ namespace }) => this.ports.approvals?.pending(parseNamespace(namespace)) ?? [],
    'approvals.answer': ({ namespace, approvalId, answer }) => {
      if (this.ports.approvals === undefined) throw new WardError('not_found', `no pending approval ${approvalId}`);
      this.ports.approvals.answer(this.requireNamespace(namespace), approvalId, answer);
      return null;
    },
    'approvals.watch': ({ namespace }, client) => this.watchApprovals(namespace, client),
    'agents.list': ({ namespace }) => this.store(namespace).agents.list().map((agent) => this.agentView(agent)),
    'agents.publish': ({ namespace, name, spec }) => this.agentView(this.store(namespace).agents.publish(name, spec)),
    'connections.list': async ({ namespace }) => (await this.ports.connections?.list(this.requireNamespace(namespace))) ?? [],
    'settings.get': ({ namespace }) => this.settings(namespace),
    'settings.setModelProvider': ({ namespace, baseUrl, model }) => {
      const store = this.store(namespace);
      this.setMeta(store, SETTING_BASE_URL, baseUrl);
      this.setMeta(store, SETTING_MODEL, model);
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

  private requireNamespace(name: string): Namespace {
    return this.store(name).namespace;
  }

  private store(name: string): NamespaceStore {
    return this.core.store(parseNamespace(name), { mustExist: true });
  }

  private listNamespaces(): NamespaceView[] {
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
    const agent = store.agents.get(agentName);
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title });
    return this.conversationView(store, conversation.id);
  }

  private subscribeJournal({ namespace, conversationId, afterSeq }: ParsedPayload<'journal.subscribe'>, client: Client): { subscriptionId: string } {
    const store = this.store(namespace);
    store.conversations.get(conversationId);
    const subscriptionId = randomUUID();
    let batch: JournalEventView[] = [];
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      while (batch.length > 0) {
        const events = batch.slice(0, PUSH_BATCH);
        batch = batch.slice(PUSH_BATCH);
        if (this.subscriptions.has(subscriptionId)) client.push({ kind: 'journal', subscriptionId, events });
      }
    };
    // Replay and live events are coalesced per tick: the id is returned before the first push.
    const unsubscribe = store.journal.subscribe(conversationId, afterSeq, (event) => {
      batch.push(toEventView(event));
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
    this.subscriptions.set(subscriptionId, { clientId: client.id, stop: unsubscribe });
    return { subscriptionId };
  }

  private unsubscribe(subscriptionId: string, client: Client): null {
    const subscription = this.subscriptions.get(subscriptionId);
    if (subscription === undefined || subscription.clientId !== client.id) throw new WardError('not_found', `no subscription ${subscriptionId}`);
    subscription.stop();
    this.subscriptions.delete(subscriptionId);
    return null;
  }

  private watchApprovals(namespace: string, client: Client): { subscriptionId: string } {
    const ns = this.requireNamespace(namespace);
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

  private agentView(agent: { agentName: string; version: number; publishedAt: string; spec: unknown }): AgentView {
    const spec = (agent.spec ?? {}) as Record<string, unknown>;
    return {
      name: agent.agentName,
      version: agent.version,
      publishedAt: agent.publishedAt,
      instructions: typeof spec.instructions === 'string' ? spec.instructions : '',
      tools: stringList(spec.tools),
      permissions: stringList(spec.permissions),
    };
  }

  private modelKey(): ModelKeyPort {
    if (this.ports.modelKey === undefined) throw new WardError('unavailable', 'no credential store is configured for the model key');
    return this.ports.modelKey;
  }

  private getMeta(store: NamespaceStore, key: string): string | undefined {
    return store.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value;
  }

  private setMeta(store: NamespaceStore, key: string, value: string): void {
    store.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }

  private async settings(namespace: string): Promise<SettingsView> {
    const store = this.store(namespace);
    return {
      dataFolder: this.core.home,
      modelProvider: {
        baseUrl: this.getMeta(store, SETTING_BASE_URL) ?? DEFAULT_MODEL_PROVIDER.baseUrl,
        model: this.getMeta(store, SETTING_MODEL) ?? DEFAULT_MODEL_PROVIDER.model,
      },
      keySet: (await this.ports.modelKey?.has(store.namespace)) ?? false,
    };
  }
}
