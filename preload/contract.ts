/**
 * The one IPC contract between the renderer and the main process (U2).
 * Every channel names its payload schema and its result type; main parses the payload before
 * any handler runs and answers with a typed result. Shared by both sides: no Node, no Electron.
 * What the channels return is described in common/views.ts.
 */
import { z } from 'zod';
import { MAX_PROMPT_CHARS } from '../common/limits.js';
import type { WardErrorCode } from '../main/base/errors.js';
import { PERMISSION_KINDS } from '../common/events.js';
import {
  APPROVAL_ANSWERS,
  ELICITATION_ACTIONS,
  FOLDER_ACCESS,
  type AgentView,
  type ChangeSetView,
  type FileDiffView,
  type RewindOutcomeView,
  type ConnectionView,
  type ConversationView,
  type JournalEventView,
  type NamespaceView,
  type PendingApprovalView,
  type PendingElicitationView,
  type PolicyView,
  type PrepareOutcome,
  type ProviderTestView,
  type ReviewPageView,
  type ReviewView,
  type RunView,
  type SearchHitView,
  type SettingsView,
  type UsageSummaryView,
} from '../common/views.js';

/** Every channel carries this prefix on the wire, so a stray or foreign channel is obvious. */
export const CHANNEL_PREFIX = 'ward:';
/** Main → renderer pushes (journal events, approval changes) travel on this one channel. */
export const EVENT_CHANNEL = 'ward:event';

const MAX_QUERY_CHARS = 200;
/** The longest link Ward opens in the system browser; a page offers no longer one. */
export const MAX_LINK_CHARS = 2_000;
/** The newest events a window may ask to have first, before the history behind them. */
export const MAX_TAIL_EVENTS = 1_000;

const namespaceName = z.string().regex(/^[a-z0-9-]{1,32}$/, 'a namespace is lowercase letters, digits and "-", 1 to 32 characters');
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'expected an id (UUID)');
const seq = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const agentName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'an agent name is lowercase letters, digits and "-", up to 64 characters');
const modelName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@\-[\]]{0,127}$/, 'a model name is letters, digits and . _ : @ - [ ]');
const connectionName = z.string().regex(/^[a-z0-9-]{1,32}$/, 'a connection name is lowercase letters, digits and "-", 1 to 32 characters');
const inNamespace = { namespace: namespaceName };

const RECONCILE_OUTCOMES = ['succeeded', 'failed', 'stopped'] as const;

// ---- channels ----

/** A channel: the schema main parses the payload with, and (by type only) what it returns. */
interface Channel<P extends z.ZodType, R> {
  readonly payload: P;
  readonly result?: R;
}
function channel<R>() {
  return <P extends z.ZodType>(payload: P): Channel<P, R> => ({ payload });
}

export const CONTRACT = {
  'namespaces.list': channel<NamespaceView[]>()(z.strictObject({})),
  'namespaces.create': channel<NamespaceView>()(z.strictObject({ name: namespaceName })),

  'conversations.list': channel<ConversationView[]>()(z.strictObject({ ...inNamespace, query: z.string().max(MAX_QUERY_CHARS).optional() })),
  'conversations.get': channel<ConversationView>()(z.strictObject({ ...inNamespace, conversationId: uuid })),
  /** A new chat with its first prompt; `workspace` is its project folder (outside Ward's data), `access` what it may do there unasked. */
  'conversations.start': channel<{ conversationId: string; runId: string; attached: boolean }>()(
    z.strictObject({
      ...inNamespace,
      agentName,
      prompt: z.string().min(1).max(MAX_PROMPT_CHARS),
      /** The same id sent again (a retried New chat) attaches to what the first made. */
      requestId: uuid,
      workspace: z.string().min(1).max(4_096).optional(),
      access: z.enum(FOLDER_ACCESS).optional(),
    }),
  ),

  /**
   * Replays from `afterSeq`, then follows; events arrive on EVENT_CHANNEL under the subscription id.
   * With `tail`, the newest `tail` events come first (those after `tailFrom`), then the history
   * before them, in order, while live events follow the tail.
   */
  'journal.subscribe': channel<{ subscriptionId: string; tailFrom: number | null }>()(
    z.strictObject({ ...inNamespace, conversationId: uuid, afterSeq: seq, tail: z.number().int().min(1).max(MAX_TAIL_EVENTS).optional() }),
  ),
  'journal.unsubscribe': channel<null>()(z.strictObject({ subscriptionId: z.string().min(1).max(64) })),

  'runs.send': channel<{ runId: string; attached: boolean }>()(
    z.strictObject({ ...inNamespace, conversationId: uuid, requestId: uuid, prompt: z.string().min(1).max(MAX_PROMPT_CHARS) }),
  ),
  /**
   * The person started writing in this chat: main starts its CLI now (issue 19), so the message
   * goes to a CLI already running. Nothing is journaled or sent before the message; `not_ahead`
   * when warm sessions are off or the chat's launch asks something first, `busy` while a run holds it.
   */
  'runs.prepare': channel<{ outcome: PrepareOutcome }>()(z.strictObject({ ...inNamespace, conversationId: uuid })),
  'runs.stop': channel<RunView>()(z.strictObject({ ...inNamespace, runId: uuid })),
  'runs.reconcile': channel<RunView>()(
    z.strictObject({ ...inNamespace, runId: uuid, outcome: z.enum(RECONCILE_OUTCOMES), note: z.string().min(1).max(500) }),
  ),

  /**
   * Opening a change set (its first event's `seq`: a run's changes or a rewind) in one request: its
   * files with their line counts and the first file's diff up to its first screen.
   */
  'changes.open': channel<ChangeSetView>()(z.strictObject({ ...inNamespace, conversationId: uuid, seq })),
  /** One file's whole diff, fetched when it is opened; a file whose bytes Ward did not keep says why, with no content. */
  'changes.diff': channel<FileDiffView>()(z.strictObject({ ...inNamespace, conversationId: uuid, seq, index: z.number().int().min(0).max(1_000_000) })),
  /** Restores the files, the conversation (its CLI session forks) or both to before `to` (a run's id or an event's number); file conflicts change nothing unless `force`. */
  'changes.rewind': channel<RewindOutcomeView>()(
    z.strictObject({ ...inNamespace, conversationId: uuid, to: z.union([uuid, z.string().regex(/^[1-9]\d{0,14}$/, 'an event number')]), force: z.boolean(), scope: z.enum(['files', 'conversation', 'both']).optional() }),
  ),

  'approvals.list': channel<PendingApprovalView[]>()(z.strictObject({ ...inNamespace })),
  'approvals.answer': channel<null>()(z.strictObject({ ...inNamespace, approvalId: z.string().min(1).max(64), answer: z.enum(APPROVAL_ANSWERS) })),
  /** Pushes the namespace's pending approvals and servers' requests for input on EVENT_CHANNEL whenever they change. */
  'approvals.watch': channel<{ subscriptionId: string }>()(z.strictObject({ ...inNamespace })),
  /** Answers a server's request for input; an accepted form is checked by main (an error names the field), an accepted URL is opened by main. */
  'elicitations.answer': channel<null>()(
    z.strictObject({
      ...inNamespace,
      elicitationId: z.string().min(1).max(64),
      action: z.enum(ELICITATION_ACTIONS),
      content: z.record(z.string().max(64), z.union([z.string().max(4_096), z.number(), z.boolean(), z.array(z.string().max(256)).max(64)])).optional(),
    }),
  ),

  'agents.list': channel<AgentView[]>()(z.strictObject({ ...inNamespace })),
  /**
   * Publishes the next version with new instructions, keeping the named subset of the tools
   * pinned in the latest version, plus `addTools` (`CONNECTION/TOOL` or `CONNECTION/*`) pinned
   * from the namespace's connections as they list them now.
   */
  'agents.publish': channel<AgentView>()(
    z.strictObject({
      ...inNamespace,
      name: agentName,
      instructions: z.string().max(256 * 1024),
      keepTools: z.array(z.string().min(1).max(64)).max(256),
      addTools: z.array(z.string().min(3).max(200)).max(256).optional(),
    }),
  ),

  /** Grants the agent a permission for every conversation (`--allow-read=…` style; relative paths are under the home folder). */
  'agents.grant': channel<AgentView>()(
    z.strictObject({ ...inNamespace, name: agentName, effect: z.enum(['allow', 'deny']), kind: z.enum(PERMISSION_KINDS), entries: z.string().min(1).max(4_000) }),
  ),
  'agents.revokeGrant': channel<AgentView>()(z.strictObject({ ...inNamespace, name: agentName, grantId: z.string().min(8).max(64) })),

  'connections.list': channel<ConnectionView[]>()(z.strictObject({ ...inNamespace })),
  /**
   * Adds a remote (Streamable HTTP) MCP server; local servers are added with `ward connections add`.
   * `clientId` (and `clientSecret`, renderer → main only, kept in the keychain) name a client
   * registered with the server's authorization server beforehand.
   */
  'connections.add': channel<ConnectionView>()(
    z.strictObject({
      ...inNamespace,
      name: connectionName,
      url: z.url({ protocol: /^https?$/ }).max(2_048),
      clientId: z.string().regex(/^[\x21-\x7e]{1,256}$/, 'a client id is 1 to 256 visible characters without spaces').optional(),
      clientSecret: z.string().min(1).max(4_096).optional(),
    }),
  ),
  /**
   * Adds a local (stdio) MCP server: the program and its arguments (no shell), and secret variables
   * whose values go renderer → main → the keychain only, never back (C1, C3).
   */
  'connections.addLocal': channel<ConnectionView>()(
    z.strictObject({
      ...inNamespace,
      name: connectionName,
      command: z.string().min(1).max(4_096),
      args: z.array(z.string().max(4_096)).max(64),
      secrets: z.array(z.strictObject({ name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'a variable name is letters, digits and _'), value: z.string().min(1).max(16_384) })).max(16),
      /** Runs it in the OS sandbox (as `--sandbox`): the hosts it may reach and its one read-write folder (absent: a private one). */
      sandbox: z.strictObject({ net: z.array(z.string().min(1).max(300)).max(100), folder: z.string().min(1).max(4_096).optional() }).optional(),
    }),
  ),
  /** Connects now, lists the tools and pins new ones (changed ones stay disabled until re-pinned). */
  'connections.check': channel<ConnectionView>()(z.strictObject({ ...inNamespace, name: connectionName })),
  /**
   * Turns one pinned tool on or off, or re-pins a changed one to what the server offers now
   * (as `ward connections tools NAME --enable/--disable/--repin TOOL`).
   */
  'connections.changeTool': channel<ConnectionView>()(
    z.strictObject({ ...inNamespace, name: connectionName, action: z.enum(['enable', 'disable', 'repin']), tool: z.string().min(1).max(256) }),
  ),
  /** Signs in to a remote server in the system browser (OAuth with PKCE, loopback redirect). */
  'connections.signIn': channel<ConnectionView>()(z.strictObject({ ...inNamespace, name: connectionName })),
  /** Forgets the sign-in to a remote server (its tokens); the next call needs a new one. */
  'connections.signOut': channel<ConnectionView>()(z.strictObject({ ...inNamespace, name: connectionName })),
  'connections.remove': channel<null>()(z.strictObject({ ...inNamespace, name: connectionName })),

  'settings.get': channel<SettingsView>()(z.strictObject({ ...inNamespace })),
  'settings.setModelProvider': channel<SettingsView>()(
    z.strictObject({ ...inNamespace, baseUrl: z.url({ protocol: /^https?$/ }).max(500), model: modelName }),
  ),
  /** Renderer → main only: the key is stored and never sent back. */
  'settings.setKey': channel<SettingsView>()(z.strictObject({ ...inNamespace, key: z.string().min(8).max(500) })),
  'settings.clearKey': channel<SettingsView>()(z.strictObject({ ...inNamespace })),
  /** Asks the provider to count the tokens of one word (nothing is generated) with the stored settings and key. */
  'settings.testProvider': channel<ProviderTestView>()(z.strictObject({ ...inNamespace })),

  /** The admin policy this Ward started with (changes are read at the next start). */
  'policy.get': channel<PolicyView>()(z.strictObject({})),

  /** Full-text search over the namespace's prompts, answers, tool names and previews, best first. */
  'search.query': channel<SearchHitView[]>()(
    z.strictObject({ ...inNamespace, query: z.string().min(1).max(MAX_QUERY_CHARS), offset: z.number().int().min(0).max(10_000).optional() }),
  ),
  /** Tokens and cost per day; `since` is a day (YYYY-MM-DD, UTC). */
  'usage.summary': channel<UsageSummaryView>()(z.strictObject({ ...inNamespace, since: z.iso.date().optional() })),

  /** Asks the person for a bundle, checks it and shows it read-only in a window of its own; null when they cancel. */
  'review.open': channel<ReviewView | null>()(z.strictObject({})),
  'review.get': channel<ReviewView>()(z.strictObject({ reviewId: uuid })),
  /** One page of the bundle's events, parsed by their schemas as the journal feed is. */
  'review.events': channel<ReviewPageView>()(z.strictObject({ reviewId: uuid, page: z.number().int().min(0).max(10_000) })),

  /** Opens a link in the system browser after the person confirms; only parsed http/https URLs. */
  'links.openExternal': channel<{ opened: boolean }>()(z.strictObject({ url: z.string().min(1).max(MAX_LINK_CHARS) })),

  /** Asks the person for a folder with the system's folder dialog; null when they cancelled. */
  'folders.pick': channel<{ path: string | null }>()(z.strictObject({})),
} as const;

export type ChannelName = keyof typeof CONTRACT;
export const CHANNEL_NAMES = Object.keys(CONTRACT) as ChannelName[];
export type Payload<C extends ChannelName> = z.input<(typeof CONTRACT)[C]['payload']>;
export type ParsedPayload<C extends ChannelName> = z.output<(typeof CONTRACT)[C]['payload']>;
export type Result<C extends ChannelName> = Exclude<(typeof CONTRACT)[C]['result'], undefined>;

export function isChannelName(name: unknown): name is ChannelName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(CONTRACT, name);
}

export function wireChannel(name: ChannelName): string {
  return `${CHANNEL_PREFIX}${name}`;
}

// ---- results and errors ----

/** Stable codes the renderer may branch on; messages are for people. */
export const IPC_ERROR_CODES = {
  unknownChannel: 'unknown_channel',
  invalidPayload: 'invalid_payload',
  forbiddenSender: 'forbidden_sender',
} as const;

export type IpcErrorCode = (typeof IPC_ERROR_CODES)[keyof typeof IPC_ERROR_CODES];

export interface IpcError {
  /** A WardError code from main, or one of the transport's own codes. */
  readonly code: WardErrorCode | IpcErrorCode;
  readonly message: string;
}

export type IpcResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: IpcError };

// ---- pushed events ----

export type PushedEvent =
  | { readonly kind: 'journal'; readonly subscriptionId: string; readonly events: readonly JournalEventView[] }
  | { readonly kind: 'approvals'; readonly subscriptionId: string; readonly pending: readonly PendingApprovalView[]; readonly elicitations: readonly PendingElicitationView[] };

type Group<C> = C extends `${infer G}.${string}` ? G : never;
type Method<C, G extends string> = C extends `${G}.${infer M}` ? M : never;

/** What `window.ward` offers the renderer: purpose-named functions grouped by area, plus events. */
export type WardApi = {
  readonly [G in Group<ChannelName>]: {
    readonly [C in ChannelName as Method<C, G>]: (payload: Payload<C>) => Promise<IpcResult<Result<C>>>;
  };
} & {
  /** Listens to pushed events; returns a function that stops listening. */
  readonly onEvent: (listener: (event: PushedEvent) => void) => () => void;
};

export type Invoke = (channel: ChannelName, payload: unknown) => Promise<IpcResult<unknown>>;
export type Listen = (listener: (event: PushedEvent) => void) => () => void;

/** Builds `window.ward` from the contract over any transport (the preload, or a test harness). */
export function buildWardApi(invoke: Invoke, listen: Listen): WardApi {
  const api: Record<string, Record<string, (payload: unknown) => Promise<IpcResult<unknown>>>> = {};
  for (const name of CHANNEL_NAMES) {
    const [group, method] = name.split('.') as [string, string];
    api[group] ??= {};
    api[group][method] = (payload: unknown) => invoke(name, payload);
  }
  return Object.freeze({ ...api, onEvent: listen }) as unknown as WardApi;
}
