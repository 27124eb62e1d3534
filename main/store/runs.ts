import { createHash, randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { WardError } from '../base/errors.js';
import { isProcessAlive, processIdentity, type ProcessAlive } from '../base/process.js';
import { wardCommand, type Namespace } from '../namespaces/namespace.js';
import { rowByIdPrefix, SHORT_ID_CHARS } from './id-prefix.js';

export { isProcessAlive, processIdentity, type ProcessAlive };

export type RunState = 'admitted' | 'running' | 'stopping' | 'stopped' | 'succeeded' | 'failed' | 'uncertain';

/** States that hold the conversation's reservation (R7, R8). */
export const ACTIVE_STATES: readonly RunState[] = ['admitted', 'running', 'stopping', 'uncertain'];

/** The run state machine. `uncertain` leaves only through an explicit reconcile. */
const TRANSITIONS: Readonly<Record<RunState, readonly RunState[]>> = {
  admitted: ['running', 'stopping', 'failed', 'uncertain'],
  running: ['stopping', 'succeeded', 'failed', 'uncertain'],
  stopping: ['stopped', 'failed', 'uncertain'],
  uncertain: [],
  stopped: [],
  succeeded: [],
  failed: [],
};

/** Outcomes a person may record for an uncertain run after checking what happened. */
export const RECONCILED_STATES: readonly RunState[] = ['failed', 'stopped', 'succeeded'];

export interface Run {
  readonly id: string;
  readonly conversationId: string;
  readonly requestId: string;
  readonly fingerprint: string;
  readonly state: RunState;
  readonly reason: string | null;
  readonly ownerPid: number;
  /** The owner's start time where the OS tells it (Linux), so a reused pid is not taken for the owner. */
  readonly ownerIdentity: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface Admission {
  readonly run: Run;
  /** True when the same request id with the same input attached to an existing run (R7). */
  readonly attached: boolean;
}

interface RunRow {
  id: string;
  conversation_id: string;
  request_id: string;
  fingerprint: string;
  state: RunState;
  reason: string | null;
  owner_pid: number;
  owner_identity: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = 'id, conversation_id, request_id, fingerprint, state, reason, owner_pid, created_at, updated_at, owner_identity';

function toRun(row: RunRow): Run {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    requestId: row.request_id,
    fingerprint: row.fingerprint,
    state: row.state,
    reason: row.reason,
    ownerPid: row.owner_pid,
    ownerIdentity: row.owner_identity,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A stable fingerprint of a request's input: canonical JSON (sorted keys), SHA-256. */
export function fingerprintInput(input: unknown): string {
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

export class RunRepository {
  constructor(
    private readonly db: Database,
    private readonly ownerPid: number = process.pid,
    private readonly ownerIdentity: string | null = processIdentity(ownerPid),
    /** Names the namespace in the commands a refusal suggests, so they work whatever WARD_NAMESPACE says. */
    private readonly namespace?: Namespace,
  ) {}

  /** A `ward` command for a hint, acting on this repository's namespace when it is known. */
  private command(command: string): string {
    return this.namespace === undefined ? `"ward ${command}"` : wardCommand(this.namespace, command);
  }

  /**
   * R7: admits at most one producer per conversation, atomically (IMMEDIATE transaction and a
   * partial unique index). The same request id with the same fingerprint attaches to the run it
   * already admitted; with a different fingerprint it is refused.
   */
  admit(conversationId: string, requestId: string, fingerprint: string): Admission {
    const admit = this.db.transaction((): Admission => {
      const existing = this.db
        .prepare<[string, string], RunRow>(`SELECT ${COLUMNS} FROM runs WHERE conversation_id = ? AND request_id = ?`)
        .get(conversationId, requestId);
      if (existing !== undefined) {
        if (existing.fingerprint !== fingerprint) {
          throw new WardError('request_conflict', `request ${requestId} was already used with a different input; use a new request id`);
        }
        return { run: toRun(existing), attached: true };
      }
      const active = this.activeFor(conversationId);
      if (active?.state === 'uncertain') {
        throw new WardError(
          'run_uncertain',
          `conversation ${conversationId} has an uncertain run (${active.id}): check what its tool calls did (${this.command(`replay ${conversationId.slice(0, SHORT_ID_CHARS)}`)}), then record it with ${this.command(`reconcile ${active.id.slice(0, SHORT_ID_CHARS)} --outcome succeeded|failed|stopped --note TEXT`)}`,
          { desktop: `This chat has a run that did not finish normally: check what its tools did, then record what happened in the banner above the chat.` },
        );
      }
      if (active !== undefined) throw new WardError('conversation_busy', `conversation ${conversationId} already has ${active.state === 'admitted' ? 'an' : 'a'} ${active.state} run (${active.id}); wait for it to finish or stop it`);
      const now = new Date().toISOString();
      const id = randomUUID();
      this.db
        .prepare(`INSERT INTO runs (${COLUMNS}) VALUES (?, ?, ?, ?, 'admitted', NULL, ?, ?, ?, ?)`)
        .run(id, conversationId, requestId, fingerprint, this.ownerPid, now, now, this.ownerIdentity);
      return { run: this.get(id), attached: false };
    });
    return admit.immediate();
  }

  get(id: string): Run {
    const row = this.db.prepare<[string], RunRow>(`SELECT ${COLUMNS} FROM runs WHERE id = ?`).get(id);
    if (row === undefined) throw new WardError('not_found', `no run ${id}`);
    return toRun(row);
  }

  /** A run by its id or a unique prefix of 8+ characters (as `ward` prints them). */
  resolve(idOrPrefix: string): Run {
    return toRun(rowByIdPrefix<RunRow>(this.db, 'runs', COLUMNS, 'run', idOrPrefix));
  }

  /** The conversation an earlier run with this request id belongs to (R7: a retried request finds it). */
  conversationOfRequest(requestId: string): string | undefined {
    return this.db.prepare<[string], { conversation_id: string }>('SELECT conversation_id FROM runs WHERE request_id = ? ORDER BY created_at LIMIT 1').get(requestId)?.conversation_id;
  }

  activeFor(conversationId: string): Run | undefined {
    const row = this.db
      .prepare<[string], RunRow>(`SELECT ${COLUMNS} FROM runs WHERE conversation_id = ? AND state IN ('admitted','running','stopping','uncertain')`)
      .get(conversationId);
    return row === undefined ? undefined : toRun(row);
  }

  /** The id of the conversation's newest run (admitted before `before`, when given); null when there is none. */
  latestId(conversationId: string, before?: string): string | null {
    const row =
      before === undefined
        ? this.db.prepare<[string], { id: string }>('SELECT id FROM runs WHERE conversation_id = ? ORDER BY rowid DESC LIMIT 1').get(conversationId)
        : this.db
            .prepare<[string, string], { id: string }>('SELECT id FROM runs WHERE conversation_id = ? AND rowid < (SELECT rowid FROM runs WHERE id = ?) ORDER BY rowid DESC LIMIT 1')
            .get(conversationId, before);
    return row?.id ?? null;
  }

  listFor(conversationId: string): Run[] {
    return this.db.prepare<[string], RunRow>(`SELECT ${COLUMNS} FROM runs WHERE conversation_id = ? ORDER BY created_at, id`).all(conversationId).map(toRun);
  }

  /** Moves a run along the state machine; an illegal move is an error, never a silent overwrite. */
  transition(id: string, to: RunState, reason: string | null = null): Run {
    const move = this.db.transaction(() => {
      const run = this.get(id);
      if (!TRANSITIONS[run.state].includes(to)) {
        throw new WardError('invalid_transition', `run ${id} cannot go from ${run.state} to ${to}`);
      }
      this.db.prepare('UPDATE runs SET state = ?, reason = ?, updated_at = ? WHERE id = ?').run(to, reason, new Date().toISOString(), id);
    });
    move.immediate();
    return this.get(id);
  }

  /** R8: a person resolves an uncertain run after checking its effects; this releases the reservation. */
  reconcile(id: string, outcome: RunState, note: string): Run {
    if (!RECONCILED_STATES.includes(outcome)) {
      throw new WardError('usage', `an uncertain run can be reconciled as ${RECONCILED_STATES.join(', ')}, not ${outcome}`);
    }
    const settle = this.db.transaction(() => {
      const run = this.resolve(id);
      if (run.state !== 'uncertain') throw new WardError('invalid_transition', `run ${run.id} is ${run.state}, not uncertain`);
      this.db
        .prepare('UPDATE runs SET state = ?, reason = ?, updated_at = ? WHERE id = ?')
        .run(outcome, `reconciled: ${note}`.slice(0, 500), new Date().toISOString(), run.id);
      return run.id;
    });
    return this.get(settle.immediate());
  }

  /** Whether a turn runs in this namespace now, in any process (a run left behind by a process that is gone does not count). */
  hasLiveRun(alive: ProcessAlive = isProcessAlive): boolean {
    return this.db
      .prepare<[], Pick<RunRow, 'owner_pid' | 'owner_identity'>>("SELECT owner_pid, owner_identity FROM runs WHERE state IN ('admitted','running','stopping')")
      .all()
      .some((row) => alive(row.owner_pid, row.owner_identity));
  }

  /**
   * R8 at start-up: runs left active by a process that is gone become `uncertain` and keep their
   * reservation. Returns the runs that were marked.
   */
  markOrphansUncertain(alive: ProcessAlive = isProcessAlive): Run[] {
    const sweep = this.db.transaction(() => {
      const rows = this.db
        .prepare<[], RunRow>(`SELECT ${COLUMNS} FROM runs WHERE state IN ('admitted','running','stopping')`)
        .all()
        .filter((row) => row.owner_pid !== this.ownerPid && !alive(row.owner_pid, row.owner_identity));
      const now = new Date().toISOString();
      for (const row of rows) {
        this.db
          .prepare("UPDATE runs SET state = 'uncertain', reason = ?, updated_at = ? WHERE id = ?")
          .run(`the Ward process (pid ${row.owner_pid}) ended while the run was ${row.state}; its outcome is unknown`, now, row.id);
      }
      return rows.map((row) => row.id);
    });
    return sweep.immediate().map((id) => this.get(id));
  }
}

export function newRequestId(): string {
  return randomUUID();
}
