/**
 * Every event Ward writes to a conversation's journal: one schema per event type with exactly
 * the fields its producer writes, looked up by the event's `type`.
 *
 * Producers build events with `journalEvent` (or a typed `emit`), so a wrong field is a compile
 * error; nothing is parsed on the append path. Readers (the IPC feed, the desktop timeline,
 * `ward replay`, `ward run`) parse with `readJournalEvent`: an event that does not match its
 * type's schema (old or foreign data) comes back as `unreadable` with its stored type, and is
 * shown as such, never guessed at.
 *
 * Redaction is per field: every text field that can carry model, tool or provider text is
 * redacted of the secrets the turn handed out before it is written (main/app/runs/turn.ts). The one
 * field whose keys the model chooses, a tool call's arguments, also gets a key-name safety net
 * when it is read (`redactSecretKeys`), because tool arguments are where credentials are passed
 * by name. Parsing strips nothing silently: a field no schema names makes the event unreadable.
 * Shared by main and the renderer: imports zod only.
 */
import * as z from 'zod';

export const RUN_STATES = ['admitted', 'running', 'stopping', 'stopped', 'succeeded', 'failed', 'uncertain'] as const;
export type RunState = (typeof RUN_STATES)[number];
export const PERMISSION_KINDS = ['read', 'write', 'net', 'run', 'env', 'mcp'] as const;
export type PermissionKind = (typeof PERMISSION_KINDS)[number];

const REDACTED = '[redacted]';
/** Argument names that could carry a credential. */
const SECRET_KEY = /^(authorization|capability|cap|token|access_?token|refresh_?token|id_?token|api_?key|secret|password|client_?secret|bearer)$/i;

/** Whether a field of this name could carry a credential. */
export function isSecretKeyName(name: string): boolean {
  return SECRET_KEY.test(name);
}

/** Replaces the value of every credential-like key, at any depth. */
export function redactSecretKeys(value: unknown, depth = 0): unknown {
  if (depth > 32 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactSecretKeys(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    out[key] = SECRET_KEY.test(key) ? REDACTED : redactSecretKeys(item, depth + 1);
  }
  return out;
}

const count = z.number().int().min(0);
const milliseconds = z.number().min(0);
const runState = z.enum(RUN_STATES);
const errorCode = z.string().nullable();

/** Who or what settled a permission check. */
const answerer = () => z.discriminatedUnion('by', [
  z.strictObject({ by: z.literal('rule'), rule: z.string(), grantId: z.string().optional() }),
  z.strictObject({ by: z.literal('policy') }),
  z.strictObject({ by: z.literal('person'), answer: z.enum(['once', 'conversation', 'always', 'deny']) }),
  z.strictObject({ by: z.literal('timeout'), afterMs: milliseconds }),
  z.strictObject({ by: z.literal('no_one') }),
  z.strictObject({ by: z.literal('refused') }),
]);

/** One per check, allowed or denied (P4): what was asked, what was decided, by whom, when, why. */
const permissionDecision = () => z.strictObject({
  kind: z.enum(PERMISSION_KINDS).nullable(),
  value: z.string().nullable(),
  tool: z.string(),
  /** Summarized and redacted by main/permissions/audit.ts. */
  argumentsSummary: z.string(),
  /** A Bash call's whole command line as shown to the person (escaped, whitespace runs counted, redacted). */
  command: z.string().optional(),
  decision: z.enum(['allow', 'deny']),
  answerer: answerer(),
  reason: z.string(),
  /** Which check asked: the CLI's permission question (`approval`), the broker before an MCP call, the sandbox's proxy for a host, the spawn for a variable. */
  via: z.enum(['approval', 'broker', 'sandbox', 'spawn']),
  at: z.string(),
});

/** A tool call's outcome as the broker measured it (or as the CLI reported it, for tools the broker does not serve). */
const toolOutcome = () => ({
  toolUseId: z.string(),
  ok: z.boolean(),
  bytes: count,
  durationMs: milliseconds,
  errorCode,
});

/**
 * A path's state as the change tracker saw it (issue 26, X1): a regular file by SHA-256 and size,
 * a symlink by its target (never followed), anything else by metadata. `stored` says whether the
 * bytes are in the blob store; `reason` says why not (deny-read, over the size cap, unreadable,
 * special), so a deny-read file is known by hash and size only.
 */
const fileState = () => z.strictObject({
  kind: z.enum(['file', 'link', 'special']),
  size: count,
  mode: count,
  hash: z.string().nullable(),
  target: z.string().optional(),
  stored: z.boolean(),
  reason: z.string().optional(),
});
/** One path's change; a rename names where it came `from`. `root` is the writable root it is under. */
const fileChange = () => z.strictObject({
  root: z.string(),
  path: z.string(),
  change: z.enum(['added', 'modified', 'deleted', 'renamed']),
  from: z.string().optional(),
  before: fileState().nullable(),
  after: fileState().nullable(),
});
export type FileState = z.output<ReturnType<typeof fileState>>;
export type FileChange = z.output<ReturnType<typeof fileChange>>;

/** A conversation's CLI session: its id, whether the CLI has it yet, and the fork its first turn makes. */
const cliSession = () => z.strictObject({
  sessionId: z.string(),
  started: z.boolean(),
  /** The first turn resumes `fromSessionId` up to message `atMessage` (the CLI's uuid) as a fork. */
  fork: z.strictObject({ fromSessionId: z.string(), atMessage: z.string() }).nullable(),
});
export type CliSessionState = z.output<ReturnType<typeof cliSession>>;

/**
 * Each event type's payload schema, built the first time an event of that type is read: building
 * all of them cost every `ward` command ~15 ms before its first output (issue 29), and most
 * commands read a few types.
 */
const PAYLOADS = {
  run_started: () => z.strictObject({
    requestId: z.string(),
    agent: z.string(),
    agentVersion: count,
    model: z.string(),
    session: z.enum(['new', 'resume']),
    workspace: z.string(),
    /** Whether the OS sandbox confined this turn. */
    sandboxed: z.boolean(),
  }),
  user_prompt: () => z.strictObject({ text: z.string() }),
  /** Streamed text of the assistant block `messageIndex` of the run; its assistant_text is authoritative. */
  assistant_delta: () => z.strictObject({ text: z.string(), messageIndex: count }),
  assistant_text: () => z.strictObject({ text: z.string() }),
  tool_call: () => z.strictObject({
    toolUseId: z.string(),
    tool: z.string(),
    /** The model's arguments, or `{truncated, bytes}` when too big to journal. */
    arguments: z.json().transform((value) => redactSecretKeys(value)),
  }),
  tool_result: () => z.union([
    /** The CLI handed this result to the model; `tool` is null for a tool_use Ward never saw. */
    z.strictObject({ ...toolOutcome(), tool: z.string().nullable(), preview: z.string(), previewTruncated: z.boolean() }),
    /** The turn ended before the CLI reported a result: the model never saw it, the call may have had its effect. */
    z.strictObject({ ...toolOutcome(), tool: z.string(), delivered: z.literal(false) }),
  ]),
  tool_refused: () => z.strictObject({ tool: z.string(), reason: z.string() }),
  /**
   * A broker call no tool_result accounts for: it finished after the CLI stopped waiting for it
   * (a stop, a CLI that died), or the CLI never asked for it (something else in the run used the
   * run's capability). Events written before `cause` existed were all of the first kind.
   */
  tool_drained: () => z.strictObject({ tool: z.string(), ok: z.boolean(), errorCode, bytes: count, durationMs: milliseconds, cause: z.enum(['cli_stopped_waiting', 'not_asked_by_the_cli']).optional() }),
  usage: () => z.strictObject({
    inputTokens: count,
    outputTokens: count,
    cacheReadTokens: count,
    cacheCreationTokens: count,
    costUsd: z.number().min(0).nullable(),
  }),
  /**
   * One call of the CLI to the model through Ward's gateway (G4): the provider's status (0 when it
   * could not be reached), why it failed in Ward's words, and the tokens it reported.
   */
  model_call: () => z.strictObject({
    path: z.string(),
    /** The model the request named (absent in journals written before Ward recorded it). */
    model: z.string().max(200).nullable().optional(),
    status: z.number().int().min(0).max(999),
    durationMs: milliseconds,
    problem: z.string().nullable(),
    usage: z.strictObject({ inputTokens: count, outputTokens: count, cacheReadTokens: count, cacheCreationTokens: count }).nullable(),
  }),
  /** The CLI will call the model again after a failed call (it said so: `api_retry`). */
  model_retry: () => z.strictObject({ attempt: count, maxRetries: count, delayMs: milliseconds, status: z.number().int().min(0).max(999).nullable(), error: z.string() }),
  /**
   * The CLI's first model call of the turn named another model than the run's (the pinned CLI
   * replaces some model names with others): the person is told, and the journal keeps both.
   */
  model_substituted: () => z.strictObject({ runModel: z.string().max(200), requested: z.string().max(200) }),
  /** The CLI gave up on the model for this turn: its text says why (it is not the model's answer). */
  provider_error: () => z.strictObject({ error: z.string(), text: z.string() }),
  diagnostic: () => z.strictObject({ source: z.literal('cli_stdout'), reason: z.enum(['unparseable', 'oversized', 'unexpected_shape']), detail: z.string(), bytes: count }),
  permission_decision: permissionDecision,
  /**
   * An upstream server asked the person for input during a tool call (MCP elicitation). The model
   * never sees it. A URL request records the page's origin only (its query may hold a one-time code).
   */
  elicitation_requested: () => z.strictObject({
    elicitationId: z.string(),
    server: z.string(),
    mode: z.enum(['form', 'url']),
    message: z.string(),
    fields: z.array(z.strictObject({ name: z.string(), kind: z.string(), required: z.boolean(), sensitive: z.boolean() })),
    urlOrigin: z.string().nullable(),
    /** The request came as an "input required" result (MCP 2026-07-28): the same call continues with the answer (absent in older journals). */
    continuesCall: z.boolean().optional(),
  }),
  /** How it was answered, and by whom; an accepted form's values, those of sensitive fields replaced by "[redacted]". */
  elicitation_answered: () => z.strictObject({
    elicitationId: z.string(),
    server: z.string(),
    action: z.enum(['accept', 'decline', 'cancel']),
    by: z.enum(['person', 'timeout', 'no_one', 'ended']),
    content: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.array(z.string())])).nullable(),
  }),
  /** A request Ward would not show (an unsupported field type, too many fields…), with why; the server was answered with an error. */
  elicitation_refused: () => z.strictObject({ server: z.string(), reason: z.string() }),
  run_stopping: () => z.strictObject({ reason: z.string() }),
  /** `anchored`: the anchor key was at hand, so the run's end is anchored right after (absent in older journals). */
  run_finished: () => z.strictObject({ state: runState, reason: z.string().nullable(), anchored: z.boolean().optional() }),
  /**
   * What the run did to the files it could write (X1): every root snapshotted before the turn,
   * diffed after it. Where per-call capture is on, the changes since the last scan are journaled
   * at each model request that hands the model tool results, tied to those calls (`toolUseIds`;
   * parallel calls share one event); the turn's last event (no `toolUseIds`) holds the rest.
   */
  files_changed: () => z.strictObject({ changes: z.array(fileChange()), files: count, scanMs: milliseconds, toolUseIds: z.array(z.string()).optional() }),
  /** The run's changes were not tracked (too many files, over the time budget, a failure): the run went on. */
  files_untracked: () => z.strictObject({ reason: z.string() }),
  /** The run's changes that follow are tracked for the turn, not tied to each tool call, and why (a scan too slow, the setting, a failed scan): once per run, only when it changed files. */
  files_per_call_off: () => z.strictObject({ reason: z.string() }),
  /**
   * A rewind of the files to the state before event `toSeq` (X2): the changes it made, the
   * conflicting paths `--force` overwrote, the paths it could not restore and why, and whether
   * it finished a rewind an earlier process was interrupted in.
   */
  files_rewound: () => z.strictObject({
    /** The rewind's own id, from its intent record: a resumed rewind is journaled once. */
    id: z.string(),
    toSeq: count,
    changes: z.array(fileChange()),
    forced: z.array(z.string()),
    skipped: z.array(z.strictObject({ path: z.string(), reason: z.string() })),
    resumed: z.boolean(),
  }),
  /**
   * The conversation rewound to before event `toSeq`: the CLI session the next turn resumes
   * (`after`: a fork of the session at a message, or a new one) and the one before (an undo,
   * `undid`, restores it). The journal keeps every event; `rewound` is every range of events no
   * longer in the conversation's session after this one, inclusive.
   */
  conversation_rewound: () => z.strictObject({
    id: z.string(),
    toSeq: count,
    before: cliSession(),
    after: cliSession(),
    rewound: z.array(z.strictObject({ from: count, to: count })),
    undid: count.nullable(),
  }),
  /**
   * The audit sink (issue 28) stopped taking events, or took them again: one event per change of
   * state (not per retry), in the conversation whose events were waiting, and itself sent later.
   */
  audit_sink: () => z.strictObject({ state: z.enum(['failing', 'delivering']), failingSince: z.string(), reason: z.string().max(500).nullable(), waiting: count }),
  /** A person settled an uncertain run (R8). */
  run_reconciled: () => z.strictObject({ state: runState, note: z.string() }),
};

type PayloadSchemas = { readonly [T in keyof typeof PAYLOADS]: ReturnType<(typeof PAYLOADS)[T]> };
export type JournalEventType = keyof typeof PAYLOADS;
/** A journal event as readers see it, parsed. */
export type JournalEventBody = { [T in JournalEventType]: { type: T; payload: z.output<PayloadSchemas[T]> } }[JournalEventType];
/** One parsed event type. */
export type EventOf<T extends JournalEventType> = Extract<JournalEventBody, { type: T }>;
/** What a producer writes for an event type (before the read-side transforms). */
export type PayloadOf<T extends JournalEventType> = z.input<PayloadSchemas[T]>;

/** An event whose payload does not match its type's schema; its payload is withheld. */
export interface UnreadableEvent {
  readonly type: 'unreadable';
  readonly payload: { readonly storedType: string; readonly problem: string };
}

const built = new Map<string, z.ZodType>();
const unreadablePayload = () => z.strictObject({ storedType: z.string().max(64), problem: z.string().max(200) });

/** The payload schema of a type Ward writes (or of `unreadable`, which main hands the renderer's feed), built on first use. */
function payloadSchema(type: string): z.ZodType | undefined {
  let schema = built.get(type);
  if (schema === undefined) {
    const build = type === 'unreadable' ? unreadablePayload : Object.hasOwn(PAYLOADS, type) ? PAYLOADS[type as JournalEventType] : undefined;
    if (build === undefined) return undefined;
    schema = build();
    built.set(type, schema);
  }
  return schema;
}

/** Every type's payload schema, built: for tests that walk them all. */
export function journalPayloadSchemas(): ReadonlyArray<readonly [JournalEventType, z.ZodType]> {
  return (Object.keys(PAYLOADS) as JournalEventType[]).map((type) => [type, payloadSchema(type)!] as const);
}

/** A typed event for the journal, checked at compile time (producers never parse on the append path). */
export function journalEvent<T extends JournalEventType>(type: T, payload: PayloadOf<T>): { readonly type: T; readonly payload: PayloadOf<T> } {
  return { type, payload };
}

/** Parses a stored event; one that does not match its schema comes back as `unreadable`, never half-read. */
export function readJournalEvent(type: string, payload: unknown): JournalEventBody | UnreadableEvent {
  const schema = payloadSchema(type);
  if (schema === undefined) return unreadable(type, 'no event of this type is written by Ward');
  const parsed = schema.safeParse(payload);
  if (parsed.success) return { type, payload: parsed.data } as JournalEventBody | UnreadableEvent;
  const issue = parsed.error.issues[0];
  const where = issue === undefined ? '' : `${['payload', ...issue.path].map(String).join('.')}: `;
  return unreadable(type, `${where}${issue?.message ?? 'malformed'}`);
}

// Not a closure in readJournalEvent: that runs once per event of every export and review.
function unreadable(type: string, problem: string): UnreadableEvent {
  return { type: 'unreadable', payload: { storedType: type.slice(0, 64), problem: problem.slice(0, 200) } };
}
