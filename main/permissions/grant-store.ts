import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { WardError } from '../base/errors.js';
import { assertSandboxCanAllow, canonicalEntry, isGrantKind, type Effect, type GrantKind, type Rule } from './grants.js';

export type GrantScope = 'conversation' | 'agent' | 'namespace';

export interface StoredGrant {
  readonly id: string;
  readonly scope: GrantScope;
  readonly conversationId: string | null;
  readonly agentId: string | null;
  readonly effect: Effect;
  readonly kind: GrantKind;
  readonly value: string;
  /** How it came to be: `prompt:conversation`, `prompt:always`, `cli`, … */
  readonly grantedBy: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export interface NewGrant {
  readonly scope: GrantScope;
  readonly conversationId?: string;
  readonly agentId?: string;
  readonly effect: Effect;
  readonly kind: GrantKind;
  /** Canonical value (see Rule.value); it is re-validated here. */
  readonly value: string;
  readonly grantedBy: string;
}

interface GrantRow {
  id: string;
  scope: GrantScope;
  conversation_id: string | null;
  agent_id: string | null;
  effect: Effect;
  kind: string;
  value: string;
  granted_by: string;
  created_at: string;
  revoked_at: string | null;
}

const COLUMNS = 'id, scope, conversation_id, agent_id, effect, kind, value, granted_by, created_at, revoked_at';

function toGrant(row: GrantRow): StoredGrant {
  if (!isGrantKind(row.kind)) throw new WardError('store_corrupt', `grant ${row.id} has an unknown kind`);
  return {
    id: row.id,
    scope: row.scope,
    conversationId: row.conversation_id,
    agentId: row.agent_id,
    effect: row.effect,
    kind: row.kind,
    value: row.value,
    grantedBy: row.granted_by,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export function ruleOf(grant: StoredGrant): Rule {
  return { effect: grant.effect, kind: grant.kind, value: grant.value, source: grant.scope, grantId: grant.id };
}

/**
 * Grants kept in a namespace's database. Reads always go to SQLite, so a revoke made by
 * another process (`ward permissions revoke`) is seen by the very next check (B4).
 */
export class GrantStore {
  constructor(private readonly db: Database, private readonly now: () => Date = () => new Date()) {}

  /** Adds a grant, or returns the identical active one that already exists. */
  add(input: NewGrant): StoredGrant {
    if ((input.scope === 'conversation') !== (input.conversationId !== undefined)) throw new WardError('internal', 'a conversation grant needs exactly a conversation id');
    if ((input.scope === 'agent') !== (input.agentId !== undefined)) throw new WardError('internal', 'an agent grant needs exactly an agent id');
    // Stored values are canonical already; parsing again refuses anything that is not.
    const value = canonicalEntry(input.kind, input.value, '/');
    assertSandboxCanAllow(input.effect, input.kind, value);
    if (value !== input.value) throw new WardError('invalid_grant', `${input.kind} grant value ${JSON.stringify(input.value.slice(0, 80))} is not canonical (${JSON.stringify(value.slice(0, 80))})`);
    const insert = this.db.transaction(() => {
      const existing = this.db
        .prepare<[string, string | null, string | null, string, string, string], GrantRow>(
          `SELECT ${COLUMNS} FROM grants WHERE scope = ? AND conversation_id IS ? AND agent_id IS ? AND effect = ? AND kind = ? AND value = ? AND revoked_at IS NULL`,
        )
        .get(input.scope, input.conversationId ?? null, input.agentId ?? null, input.effect, input.kind, value);
      if (existing !== undefined) return toGrant(existing);
      const id = randomUUID();
      this.db
        .prepare('INSERT INTO grants (id, scope, conversation_id, agent_id, effect, kind, value, granted_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(id, input.scope, input.conversationId ?? null, input.agentId ?? null, input.effect, input.kind, value, input.grantedBy.slice(0, 100), this.now().toISOString());
      return this.get(id);
    });
    return insert.immediate();
  }

  get(id: string): StoredGrant {
    const row = this.db.prepare<[string], GrantRow>(`SELECT ${COLUMNS} FROM grants WHERE id = ?`).get(id);
    if (row === undefined) throw new WardError('not_found', `no grant ${id}`);
    return toGrant(row);
  }

  /** The active rules that apply to one conversation of one agent: its own, the agent's, the namespace's. */
  activeRules(conversationId: string, agentId: string): Rule[] {
    return this.db
      .prepare<[string, string], GrantRow>(
        `SELECT ${COLUMNS} FROM grants WHERE revoked_at IS NULL AND (conversation_id = ? OR agent_id = ? OR scope = 'namespace') ORDER BY created_at, rowid`,
      )
      .all(conversationId, agentId)
      .map((row) => ruleOf(toGrant(row)));
  }

  /** Grants for `ward permissions`: one conversation's (with its agent's and the namespace's), or all. */
  list(filter: { conversationId?: string; agentId?: string; includeRevoked?: boolean } = {}): StoredGrant[] {
    const clauses: string[] = [];
    const params: string[] = [];
    if (filter.conversationId !== undefined || filter.agentId !== undefined) {
      clauses.push(`(conversation_id IS ? OR agent_id IS ? OR scope = 'namespace')`);
      params.push(filter.conversationId ?? '\0', filter.agentId ?? '\0');
    }
    if (!filter.includeRevoked) clauses.push('revoked_at IS NULL');
    const where = clauses.length > 0 ? `WHERE ${clauses.join(' AND ')}` : '';
    return this.db
      .prepare<string[], GrantRow>(`SELECT ${COLUMNS} FROM grants ${where} ORDER BY created_at, rowid`)
      .all(...params)
      .map(toGrant);
  }

  /** Revokes by full id or a unique prefix of at least 8 characters; returns the revoked grant. */
  revoke(idOrPrefix: string): StoredGrant {
    if (!/^[0-9a-f-]{8,36}$/.test(idOrPrefix)) throw new WardError('not_found', `no grant ${JSON.stringify(idOrPrefix.slice(0, 40))}`);
    const rows = this.db.prepare<[string], GrantRow>(`SELECT ${COLUMNS} FROM grants WHERE id LIKE ? || '%' LIMIT 2`).all(idOrPrefix);
    if (rows.length === 0) throw new WardError('not_found', `no grant ${idOrPrefix}`);
    if (rows.length > 1) throw new WardError('usage', `grant prefix ${idOrPrefix} is ambiguous; give more characters`);
    const row = rows[0]!;
    if (row.revoked_at !== null) return toGrant(row);
    this.db.prepare('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(this.now().toISOString(), row.id);
    return this.get(row.id);
  }

  /** Revokes every active grant of a conversation; returns how many. */
  revokeConversation(conversationId: string): number {
    return this.db.prepare('UPDATE grants SET revoked_at = ? WHERE conversation_id = ? AND revoked_at IS NULL').run(this.now().toISOString(), conversationId).changes;
  }
}
