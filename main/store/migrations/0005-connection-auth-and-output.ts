import type { Database } from 'better-sqlite3';

/**
 * Connections remember a pre-registered OAuth client's id (public: its secret is in the keychain),
 * the scope the last sign-in asked for, and the scope the server asked for since beyond it
 * (insufficient_scope, for the next sign-in to ask too). Pinned tools keep their output schema,
 * which the pin's hash covers too (B3).
 */
export function updateToSchemaVersion5(db: Database): void {
  db.exec(`
    ALTER TABLE connections ADD COLUMN client_id TEXT CHECK (client_id IS NULL OR length(client_id) BETWEEN 1 AND 256);
    ALTER TABLE connections ADD COLUMN scope TEXT CHECK (scope IS NULL OR length(scope) BETWEEN 1 AND 1024);
    ALTER TABLE connections ADD COLUMN wanted_scope TEXT CHECK (wanted_scope IS NULL OR length(wanted_scope) BETWEEN 1 AND 1024);
    ALTER TABLE connection_tools ADD COLUMN output_schema TEXT;
  `);
}
