import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { WardError } from '../base/errors.js';
import { GENESIS_HASH } from './chain.js';
import { rowByIdPrefix } from './id-prefix.js';

export interface Conversation {
  readonly id: string;
  readonly agentId: string;
  readonly agentVersion: number;
  /** The native CLI session UUID: `--session-id` on the first turn, `--resume` after (R4). */
  readonly cliSessionId: string;
  /** True once the CLI confirmed the native session exists; from then on turns must resume. */
  readonly sessionStarted: boolean;
  readonly title: string;
  readonly workspace: string | null;
  readonly createdAt: string;
  readonly lastSeq: number;
}

interface ConversationRow {
  id: string;
  agent_id: string;
  agent_version: number;
  cli_session_id: string;
  session_started: number;
  title: string;
  workspace: string | null;
  created_at: string;
  last_seq: number;
}

const COLUMNS = 'id, agent_id, agent_version, cli_session_id, session_started, title, workspace, created_at, last_seq';

function toConversation(row: ConversationRow): Conversation {
  return {
    id: row.id,
    agentId: row.agent_id,
    agentVersion: row.agent_version,
    cliSessionId: row.cli_session_id,
    sessionStarted: row.session_started === 1,
    title: row.title,
    workspace: row.workspace,
    createdAt: row.created_at,
    lastSeq: row.last_seq,
  };
}

export interface NewConversation {
  readonly agentId: string;
  readonly agentVersion: number;
  readonly title: string;
  readonly workspace?: string | null;
  /** The ids a CLI started ahead for this conversation already uses (the `ward` service's next new conversation). */
  readonly reserved?: { readonly id: string; readonly cliSessionId: string };
}

export class ConversationRepository {
  constructor(private readonly db: Database) {}

  create(input: NewConversation): Conversation {
    const id = input.reserved?.id ?? randomUUID();
    this.db
      .prepare(
        `INSERT INTO conversations (id, agent_id, agent_version, cli_session_id, title, workspace, created_at, last_hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, input.agentId, input.agentVersion, input.reserved?.cliSessionId ?? randomUUID(), input.title.slice(0, 200), input.workspace ?? null, new Date().toISOString(), GENESIS_HASH);
    return this.get(id);
  }

  get(id: string): Conversation {
    const row = this.db.prepare<[string], ConversationRow>(`SELECT ${COLUMNS} FROM conversations WHERE id = ?`).get(id);
    if (row === undefined) throw new WardError('not_found', `no conversation ${id} in this namespace`);
    return toConversation(row);
  }

  /** Accepts a full id or a unique prefix of at least 8 characters, as people copy them from lists. */
  resolve(idOrPrefix: string): Conversation {
    return toConversation(rowByIdPrefix<ConversationRow>(this.db, 'conversations', COLUMNS, 'conversation', idOrPrefix));
  }

  list(): Conversation[] {
    return this.db.prepare<[], ConversationRow>(`SELECT ${COLUMNS} FROM conversations ORDER BY created_at DESC, id`).all().map(toConversation);
  }

  markSessionStarted(id: string): void {
    this.db.prepare('UPDATE conversations SET session_started = 1 WHERE id = ?').run(id);
  }

  /** A rewind or its undo: the next turn starts (or resumes, when `started`) this CLI session. */
  switchSession(id: string, sessionId: string, started: boolean): void {
    this.db.prepare('UPDATE conversations SET cli_session_id = ?, session_started = ? WHERE id = ?').run(sessionId, started ? 1 : 0, id);
  }
}
