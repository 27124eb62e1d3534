import type { Database } from 'better-sqlite3';

/** Agents with immutable published versions, conversations, runs, and the hash-chained journal. */
export function updateToSchemaVersion1(db: Database): void {
  db.exec(`
    CREATE TABLE meta (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL
    ) STRICT;

    CREATE TABLE agents (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      created_at TEXT NOT NULL
    ) STRICT;

    CREATE TABLE agent_versions (
      agent_id TEXT NOT NULL REFERENCES agents(id),
      version INTEGER NOT NULL CHECK (version >= 1),
      spec TEXT NOT NULL,
      spec_hash TEXT NOT NULL,
      published_at TEXT NOT NULL,
      PRIMARY KEY (agent_id, version)
    ) STRICT;

    CREATE TRIGGER agent_versions_immutable_update BEFORE UPDATE ON agent_versions
    BEGIN SELECT RAISE(ABORT, 'published agent versions are immutable'); END;
    CREATE TRIGGER agent_versions_immutable_delete BEFORE DELETE ON agent_versions
    BEGIN SELECT RAISE(ABORT, 'published agent versions are immutable'); END;

    CREATE TABLE conversations (
      id TEXT PRIMARY KEY,
      agent_id TEXT NOT NULL,
      agent_version INTEGER NOT NULL,
      cli_session_id TEXT NOT NULL UNIQUE,
      session_started INTEGER NOT NULL DEFAULT 0,
      title TEXT NOT NULL,
      workspace TEXT,
      created_at TEXT NOT NULL,
      last_seq INTEGER NOT NULL DEFAULT 0,
      last_hash TEXT NOT NULL,
      FOREIGN KEY (agent_id, agent_version) REFERENCES agent_versions(agent_id, version)
    ) STRICT;

    CREATE TABLE runs (
      id TEXT PRIMARY KEY,
      conversation_id TEXT NOT NULL REFERENCES conversations(id),
      request_id TEXT NOT NULL,
      fingerprint TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('admitted','running','stopping','stopped','succeeded','failed','uncertain')),
      reason TEXT,
      owner_pid INTEGER NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      UNIQUE (conversation_id, request_id)
    ) STRICT;

    -- R7/R8: at most one reservation per conversation; uncertain keeps it.
    CREATE UNIQUE INDEX runs_one_active ON runs(conversation_id)
      WHERE state IN ('admitted','running','stopping','uncertain');

    CREATE TABLE events (
      conversation_id TEXT NOT NULL REFERENCES conversations(id),
      seq INTEGER NOT NULL CHECK (seq >= 1),
      run_id TEXT,
      type TEXT NOT NULL,
      payload TEXT NOT NULL,
      created_at TEXT NOT NULL,
      prev_hash TEXT NOT NULL,
      hash TEXT NOT NULL,
      PRIMARY KEY (conversation_id, seq)
    ) STRICT, WITHOUT ROWID;
  `);
}
