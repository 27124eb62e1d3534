import path from 'node:path';
import { WardError } from '../base/errors.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import { AgentRepository } from './agents.js';
import { AnchorRepository } from './anchors.js';
import { AuditOutbox } from './audit-outbox.js';
import { ConversationRepository } from './conversations.js';
import { openDatabase, type Database, type OpenOptions } from './database.js';
import { Journal } from './journal.js';
import { RunRepository } from './runs.js';
import { SearchIndex } from './search.js';

export const DATABASE_FILE = 'ward.db';

export function namespaceDatabasePath(home: string, ns: Namespace): string {
  return path.join(namespaceDir(home, ns), DATABASE_FILE);
}

/** Everything one namespace keeps in its own SQLite file (N1: nothing is shared across namespaces). */
export class NamespaceStore {
  readonly journal: Journal;
  readonly agents: AgentRepository;
  readonly conversations: ConversationRepository;
  readonly runs: RunRepository;
  readonly anchors: AnchorRepository;
  private searchIndex: SearchIndex | undefined;
  private auditOutbox: AuditOutbox | undefined;

  private constructor(
    readonly namespace: Namespace,
    readonly file: string,
    readonly db: Database,
  ) {
    this.journal = new Journal(db);
    this.agents = new AgentRepository(db);
    this.conversations = new ConversationRepository(db);
    this.runs = new RunRepository(db, undefined, undefined, namespace);
    this.anchors = new AnchorRepository(db);
  }

  /** What the audit sink has not taken yet (issue 28); prepared on first use, as only a writable, migrated store has it. */
  get audit(): AuditOutbox {
    this.auditOutbox ??= new AuditOutbox(this.db);
    return this.auditOutbox;
  }

  /** The full-text index (E4); a database opened read-only before it was migrated has none. */
  get search(): SearchIndex {
    if (this.searchIndex === undefined) {
      if (this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'events_fts'").get() === undefined) {
        throw new WardError('store_unavailable', `the database ${this.file} has no search index yet: run any command that writes to namespace ${this.namespace.name} (such as "ward conversations") once to build it`, {
          desktop: `Search is not ready for namespace ${this.namespace.name} yet: it is built the first time something in it changes (a new chat, say).`,
        });
      }
      this.searchIndex = new SearchIndex(this.db);
    }
    return this.searchIndex;
  }

  /** Read-only (OpenOptions.readonly): no migration, no write of any kind (review, replay, verify, search). */
  static open(home: string, namespace: Namespace, options: OpenOptions = {}): NamespaceStore {
    const file = namespaceDatabasePath(home, namespace);
    const db = openDatabase(file, options);
    try {
      const recorded = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'namespace'").get();
      if (recorded === undefined) {
        if (!options.readonly) db.prepare("INSERT INTO meta (key, value) VALUES ('namespace', ?)").run(namespace.name);
      } else if (recorded.value !== namespace.name) {
        // A folder copied or renamed by hand: refuse rather than mix two namespaces' data.
        throw new WardError('namespace_conflict', `the database ${file} belongs to namespace ${JSON.stringify(recorded.value)}, not ${JSON.stringify(namespace.name)}`);
      }
    } catch (error) {
      db.close();
      throw error;
    }
    return new NamespaceStore(namespace, file, db);
  }

  /** The name a database file says it belongs to, without trusting its folder name. */
  static recordedName(db: Database): string | undefined {
    return db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'namespace'").get()?.value;
  }

  close(): void {
    this.journal.dispose();
    if (this.db.open) this.db.close();
  }
}
