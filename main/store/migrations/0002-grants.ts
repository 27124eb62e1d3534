import type { Database } from 'better-sqlite3';

/**
 * Persistent permission grants (P1, P3): "for this conversation" answers, "always for this
 * agent" answers, and namespace defaults. Rows are never deleted: revoking stamps revoked_at,
 * so `ward permissions` can show what was held and when it was taken back.
 */
export function updateToSchemaVersion2(db: Database): void {
  db.exec(`
    CREATE TABLE grants (
      id TEXT PRIMARY KEY,
      scope TEXT NOT NULL CHECK (scope IN ('conversation','agent','namespace')),
      conversation_id TEXT REFERENCES conversations(id),
      agent_id TEXT REFERENCES agents(id),
      effect TEXT NOT NULL CHECK (effect IN ('allow','deny')),
      kind TEXT NOT NULL CHECK (kind IN ('read','write','net','run','env','mcp')),
      value TEXT NOT NULL CHECK (length(value) BETWEEN 1 AND 4096),
      granted_by TEXT NOT NULL,
      created_at TEXT NOT NULL,
      revoked_at TEXT,
      CHECK ((scope = 'conversation') = (conversation_id IS NOT NULL)),
      CHECK ((scope = 'agent') = (agent_id IS NOT NULL))
    ) STRICT;

    CREATE INDEX grants_by_conversation ON grants(conversation_id) WHERE revoked_at IS NULL;
    CREATE INDEX grants_by_agent ON grants(agent_id) WHERE revoked_at IS NULL;
  `);
}
