import type { Database } from 'better-sqlite3';

/**
 * Upstream MCP connections and their pinned tools. Public metadata only (C4): secrets (env
 * values, OAuth tokens, client secrets) live in the keychain under accounts named after the
 * connection; this table records only the names of secret environment variables.
 */
export function updateToSchemaVersion3(db: Database): void {
  db.exec(`
    CREATE TABLE connections (
      name TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 32),
      transport TEXT NOT NULL CHECK (transport IN ('stdio', 'http')),
      command TEXT,
      args TEXT NOT NULL DEFAULT '[]',
      url TEXT,
      allow_insecure_http INTEGER NOT NULL DEFAULT 0 CHECK (allow_insecure_http IN (0, 1)),
      secret_env TEXT NOT NULL DEFAULT '[]',
      health TEXT NOT NULL DEFAULT 'unknown' CHECK (health IN ('unknown', 'ok', 'error', 'not_signed_in')),
      last_error_code TEXT,
      checked_at TEXT,
      created_at TEXT NOT NULL,
      CHECK ((transport = 'stdio' AND command IS NOT NULL AND url IS NULL)
          OR (transport = 'http' AND url IS NOT NULL AND command IS NULL))
    ) STRICT;

    CREATE TABLE connection_tools (
      connection TEXT NOT NULL REFERENCES connections(name) ON DELETE CASCADE,
      name TEXT NOT NULL,
      description TEXT NOT NULL,
      input_schema TEXT NOT NULL,
      schema_hash TEXT NOT NULL,
      enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
      status TEXT NOT NULL DEFAULT 'pinned' CHECK (status IN ('pinned', 'schema_changed', 'missing')),
      reason TEXT,
      pinned_at TEXT NOT NULL,
      PRIMARY KEY (connection, name)
    ) STRICT;
  `);
}
