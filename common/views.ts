/**
 * What main returns to a window and the answers a window sends back: the view types of the IPC
 * contract (preload/contract.ts names the channels that carry them). Every value here is
 * renderer-visible: never a secret or a capability (U3, C3).
 */
import type { JournalEventBody, PermissionKind, RunState, UnreadableEvent } from './events.js';
import type { UsageTotal } from './usage.js';

/** What `runs.prepare` did: started the chat's CLI, found it running, found the chat busy, or starts none ahead. */
export type PrepareOutcome = 'started' | 'running' | 'busy' | 'not_ahead';

export const APPROVAL_ANSWERS = ['allow_once', 'allow_conversation', 'allow_agent', 'deny'] as const;
/** How a new chat may use its project folder without asking: not at all, reading, or reading and writing. */
export const FOLDER_ACCESS = ['ask', 'read', 'write'] as const;
export type FolderAccess = (typeof FOLDER_ACCESS)[number];
export type ApprovalAnswer = (typeof APPROVAL_ANSWERS)[number];
export const ELICITATION_ACTIONS = ['accept', 'decline', 'cancel'] as const;
export type ElicitationAction = (typeof ELICITATION_ACTIONS)[number];
export type ElicitationFieldValue = string | number | boolean | string[];

export interface NamespaceView {
  readonly name: string;
}

export interface RunView {
  readonly id: string;
  readonly state: RunState;
  readonly reason: string | null;
  readonly updatedAt: string;
}

export interface ConversationView {
  readonly id: string;
  readonly title: string;
  readonly agentName: string;
  readonly agentVersion: number;
  readonly createdAt: string;
  readonly lastSeq: number;
  /** The project folder the person chose; null when the chat works in a folder inside Ward's data. */
  readonly workspace: string | null;
  /** When the journal last changed (the creation time for an empty chat). */
  readonly lastActivityAt: string;
  /** The latest prompt or answer, bounded (model text: escape before showing). */
  readonly preview: string;
  /** Grants the person gave this chat alone (its project folder's, "allow in this conversation"). */
  readonly grants: readonly AgentPermissionView[];
  /** The run holding the conversation's reservation, if any (running, stopping, uncertain…). */
  readonly activeRun: RunView | null;
}

/**
 * One journal event as the renderer sees it: parsed by main against its schema (common/events.ts),
 * or `unreadable` with its stored type and no payload when it does not match.
 */
export type JournalEventView = {
  readonly seq: number;
  readonly runId: string | null;
  readonly createdAt: string;
} & (JournalEventBody | UnreadableEvent);

export interface AgentView {
  readonly name: string;
  readonly version: number;
  readonly publishedAt: string;
  readonly instructions: string;
  readonly modelProfile: string;
  /** Tools pinned in this version, as the model sees them (with their upstream). */
  readonly tools: readonly { readonly name: string; readonly upstream: string; readonly description: string }[];
  /** Grants the person gave this agent (every conversation with it), Deno-style. */
  readonly permissions: readonly AgentPermissionView[];
}

export interface AgentPermissionView {
  readonly id: string;
  readonly effect: 'allow' | 'deny';
  readonly kind: PermissionKind;
  readonly value: string;
  readonly grantedBy: string;
}

export interface ConnectionView {
  readonly id: string;
  readonly name: string;
  readonly url: string;
  readonly status: 'signed_in' | 'signed_out' | 'error' | 'unknown';
  readonly detail: string | null;
  readonly tools: readonly string[];
  /** Every tool Ward pinned for this connection, with its switch and, for a changed one, why it is off. */
  readonly pins: readonly ConnectionToolView[];
  /** The admin policy source that defines this connection ("Managed by your organization"), or null. */
  readonly managedBy: string | null;
}

/** One pinned tool of a connection, as the Connections page lists it. */
export interface ConnectionToolView {
  /** The server's name for it. */
  readonly name: string;
  /** The name agents and grants use (`connection__tool`). */
  readonly exposedName: string;
  readonly description: string;
  /** The person's switch; a changed or missing tool is refused whatever it says. */
  readonly enabled: boolean;
  /** `schema_changed` and `missing` tools are refused until re-pinned (the page says why, and offers Re-pin). */
  readonly status: 'pinned' | 'schema_changed' | 'missing';
}

/** A permission question waiting for the person (P3). All text is escaped and bounded by main (P1). */
export interface PendingApprovalView {
  readonly id: string;
  /** The conversation and run that asked, when main can tell; otherwise shown window-wide. */
  readonly conversationId: string | null;
  readonly runId: string | null;
  readonly agent: string;
  readonly tool: string;
  /** "wants to read /path", "wants to call the tool server/tool", … */
  readonly summary: string;
  /** The tool's arguments, summarized and redacted. */
  readonly details: string;
  /** Why the grants did not settle it. */
  readonly reason: string;
  readonly choices: readonly ApprovalAnswer[];
  readonly expiresAt: string;
}

/** One field of a server's form; text escaped and bounded by main. `value`s of options go back as they are. */
export interface ElicitationFieldView {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly kind: 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'multi';
  readonly required: boolean;
  /** Shown masked; its value is never journaled. */
  readonly sensitive: boolean;
  readonly format: 'email' | 'uri' | 'date' | 'date-time' | null;
  readonly options: readonly { readonly value: string; readonly label: string }[];
  /** Pre-filled (SEP-1034); null when the field has none. */
  readonly default: ElicitationFieldValue | null;
}

/**
 * An upstream server asks the person for input during a tool call (MCP elicitation): a form, or a
 * page to open. Shown where approvals are; its answer goes to the server, never to the model.
 */
export interface PendingElicitationView {
  readonly id: string;
  readonly conversationId: string | null;
  readonly runId: string | null;
  readonly agent: string;
  /** The connection or inline upstream that asks. */
  readonly server: string;
  readonly message: string;
  readonly mode: 'form' | 'url';
  readonly fields: readonly ElicitationFieldView[];
  /** The page a URL request asks to open (escaped for display; main opens its own copy on accept). */
  readonly url: string | null;
  readonly expiresAt: string;
}

export interface SettingsView {
  readonly dataFolder: string;
  readonly modelProvider: { readonly baseUrl: string; readonly model: string };
  /** Whether a model key is stored; the key itself never comes back (U3, C3). */
  readonly keySet: boolean;
  /** No key is stored, but Ward's environment has one (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN) that runs use. */
  readonly environmentKey: boolean;
  /** Where keys are kept: the OS keychain, Windows DPAPI, or the opt-in file store. */
  readonly keyStore: 'keychain' | 'dpapi' | 'file';
}

/** One admin policy key as `ward policy show` and the Policy page list it (like chrome://policy). */
export interface PolicySettingView {
  readonly key: string;
  readonly title: string;
  readonly description: string;
  /** Whether any source sets it; when not, `whenUnset` says what applies. */
  readonly set: boolean;
  /** The effective value as JSON text, or null when not set. */
  readonly value: string | null;
  /** mandatory: the user cannot change it; recommended: a default the user may change. */
  readonly level: 'mandatory' | 'recommended' | null;
  /** Where it came from: files, plists or registry keys, with the key. */
  readonly sources: readonly string[];
  readonly whenUnset: string;
}

export interface PolicyView {
  /** The stores that hold a policy; empty on a personal install. */
  readonly sources: readonly string[];
  readonly settings: readonly PolicySettingView[];
  readonly warnings: readonly string[];
  /** Any problem here and Ward refuses runs. */
  readonly errors: readonly string[];
  /** Where the policy's audit sink sends every event, and what waits for it; null when it names none. */
  readonly audit?: AuditSinkView | null;
}

/** The audit sink as the Policy page shows it: "Audit: sending to … — N waiting". */
export interface AuditSinkView {
  /** "syslog siem.corp:6514 over TLS (verified)", "OTLP https://otel.corp/v1/logs (TLS verified)". */
  readonly where: string;
  readonly waiting: number;
  /** When the oldest waiting event was journaled. */
  readonly oldest: string | null;
  /** Why the last send failed, while it has not succeeded since; null when delivering (or not yet tried). */
  readonly problem: string | null;
}

/** What "Test connection" found: the provider reached with the namespace's model and credential, or why not. */
export interface ProviderTestView {
  readonly ok: boolean;
  /** The provider's HTTP status; 0 when it could not be reached. */
  readonly status: number;
  readonly durationMs: number;
  /** In Ward's words, with the provider's own (escaped, bounded) where it gave one. */
  readonly message: string;
}

/** A search hit (E4): where it is and the matching passage, matched words marked. */
export interface SearchHitView {
  readonly conversationId: string;
  readonly title: string;
  readonly seq: number;
  readonly type: string;
  readonly createdAt: string;
  readonly snippet: readonly { readonly text: string; readonly match: boolean }[];
}

/** A namespace's usage: per day (UTC) and in total, each turn counted on the day it ended. */
export interface UsageSummaryView {
  readonly days: readonly ({ readonly day: string } & UsageTotal)[];
  readonly total: UsageTotal;
}

/** A bundle opened for read-only review, and what checking it found (E4). */
export interface ReviewView {
  readonly reviewId: string;
  readonly fileName: string;
  readonly ok: boolean;
  readonly signature: 'valid' | 'invalid' | 'missing';
  /** The fingerprint of the key the bundle carries. */
  readonly signer: string;
  readonly problems: readonly string[];
  readonly firstBadSeq: number | null;
  readonly conversationId: string;
  readonly title: string;
  readonly agent: string;
  readonly exportedAt: string;
  readonly events: number;
  readonly uncertainRuns: readonly string[];
  /** The bundle's events come in pages of this many (review.events). */
  readonly pageEvents: number;
  readonly pageCount: number;
}

/** One page of a bundle's events, and which of them are not the events signed (E4: the window marks each). */
export interface ReviewPageView {
  readonly events: readonly JournalEventView[];
  /** The seq of each event on the page that could not be matched to what was signed. */
  readonly notAsSigned: readonly number[];
}

/** One file of a change set (a run's changes or a rewind's), as the diff viewer lists it (issue 26). */
export interface ChangedFileView {
  readonly index: number;
  readonly path: string;
  /** Where a renamed file came from. */
  readonly from: string | null;
  readonly change: 'added' | 'modified' | 'deleted' | 'renamed';
  /** Lines added and removed; null when the content is not shown or the set is too big to count. */
  readonly added: number | null;
  readonly removed: number | null;
  /** Why the content is not shown ("deny-read", "over the size cap", "binary, link or special file"). */
  readonly notShown: string | null;
}

/** One file's diff, fetched when the person opens it: no bytes Ward did not keep (X1). */
export interface FileDiffView {
  readonly path: string;
  /** The kinds, sizes, modes and hashes of both sides, in one line. */
  readonly header: string;
  /** The unified diff's hunks (`@@` lines and `+`/`-`/` ` lines), without the `---`/`+++` lines; null when not shown. */
  readonly lines: readonly string[] | null;
  /** How many lines the whole diff has: more than `lines` holds when they are its first screen only (the rest: `changes.diff`). */
  readonly totalLines: number;
  readonly notShown: string | null;
}

/** What opening a change set shows at once: its files, and the first file's diff up to its first screen. */
export interface ChangeSetView {
  readonly files: readonly ChangedFileView[];
  /** Null for a set without files. */
  readonly first: FileDiffView | null;
}

/** What a rewind asked for by a window did, or the files that stopped it (nothing was changed then). */
export type RewindOutcomeView =
  | { readonly outcome: 'rewound'; readonly seq: number; readonly summary: string }
  | { readonly outcome: 'conflicts'; readonly conflicts: readonly { readonly path: string; readonly now: 'changed' | 'missing' }[] };
