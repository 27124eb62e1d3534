import type { Database } from 'better-sqlite3';
import { updateToSchemaVersion1 } from './0001-initial.js';
import { updateToSchemaVersion2 } from './0002-grants.js';
import { updateToSchemaVersion3 } from './0003-connections.js';
import { updateToSchemaVersion4 } from './0004-run-owner-identity.js';
import { updateToSchemaVersion5 } from './0005-connection-auth-and-output.js';
import { updateToSchemaVersion6 } from './0006-anchors.js';
import { updateToSchemaVersion7 } from './0007-search.js';
import { updateToSchemaVersion8 } from './0008-connection-sandbox.js';
import { updateToSchemaVersion9 } from './0009-search-cjk.js';
import { updateToSchemaVersion10 } from './0010-audit-cursor.js';

export interface Migration {
  readonly version: number;
  readonly up: (db: Database) => void;
}

/** One migration per schema version, in order; each runs in its own transaction. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, up: updateToSchemaVersion1 },
  { version: 2, up: updateToSchemaVersion2 },
  { version: 3, up: updateToSchemaVersion3 },
  { version: 4, up: updateToSchemaVersion4 },
  { version: 5, up: updateToSchemaVersion5 },
  { version: 6, up: updateToSchemaVersion6 },
  { version: 7, up: updateToSchemaVersion7 },
  { version: 8, up: updateToSchemaVersion8 },
  { version: 9, up: updateToSchemaVersion9 },
  { version: 10, up: updateToSchemaVersion10 },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
