import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import { resolveWardHome } from '../base/home.js';
import { DEFAULT_NAMESPACE, namespaceDir, parseNamespace, type Namespace } from '../namespaces/namespace.js';
import { NamespaceStore, namespaceDatabasePath } from './namespace-store.js';
import { openDatabase } from './database.js';
import type { Run } from './runs.js';

export interface NamespaceSummary {
  readonly name: string;
  readonly hash: string;
  readonly file: string;
}

/**
 * The composition root shared by the Electron main process and the `ward` command.
 * It owns the data folder and hands out one store per namespace, opened lazily.
 */
export class DataFolder {
  private readonly stores = new Map<string, NamespaceStore>();
  private readonly readOnlyStores = new Map<string, NamespaceStore>();
  /** Runs that start-up recovery marked uncertain (R8), for whoever wants to tell the person. */
  readonly recovered: Run[] = [];

  constructor(readonly home: string = resolveWardHome()) {}

  namespaceExists(ns: Namespace): boolean {
    return fs.existsSync(namespaceDatabasePath(this.home, ns));
  }

  createNamespace(name: string): NamespaceSummary {
    const ns = parseNamespace(name);
    if (this.namespaceExists(ns)) throw new WardError('namespace_exists', `namespace ${name} already exists`);
    this.store(ns);
    return { name: ns.name, hash: ns.hash, file: namespaceDatabasePath(this.home, ns) };
  }

  /**
   * The store of a namespace. Only the default namespace comes into being on first use; any
   * other must be created on purpose, so a typo never silently starts an empty namespace.
   */
  store(ns: Namespace, options: { mustExist?: boolean } = {}): NamespaceStore {
    const open = this.stores.get(ns.name);
    if (open !== undefined) return open;
    if (options.mustExist && ns.name !== DEFAULT_NAMESPACE && !this.namespaceExists(ns)) {
      throw new WardError('namespace_not_found', `no namespace ${ns.name}; create it with "ward namespace create ${ns.name}"`, {
        desktop: `There is no namespace ${ns.name}: choose another in the namespace list.`,
      });
    }
    this.checkHome();
    fs.mkdirSync(namespaceDir(this.home, ns), { recursive: true, mode: 0o700 });
    const store = NamespaceStore.open(this.home, ns);
    this.recovered.push(...store.runs.markOrphansUncertain());
    this.stores.set(ns.name, store);
    return store;
  }

  /**
   * A namespace's store for reading only (review, replay, verify, search): the database opened
   * read-only, never created, migrated or swept for orphaned runs, so reading changes nothing.
   */
  readOnlyStore(ns: Namespace): NamespaceStore {
    const open = this.stores.get(ns.name) ?? this.readOnlyStores.get(ns.name);
    if (open !== undefined) return open;
    if (!this.namespaceExists(ns)) throw new WardError('namespace_not_found', `no namespace ${ns.name} in ${this.home}`);
    const store = NamespaceStore.open(this.home, ns, { readonly: true });
    this.readOnlyStores.set(ns.name, store);
    return store;
  }

  /** Namespaces on disk, by the name each database records (folders are hashes). */
  listNamespaces(): NamespaceSummary[] {
    const root = path.join(this.home, 'namespaces');
    if (!fs.existsSync(root)) return [];
    const found: NamespaceSummary[] = [];
    for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const file = path.join(root, entry.name, 'ward.db');
      if (!fs.existsSync(file)) continue;
      const db = openDatabase(file);
      try {
        const name = NamespaceStore.recordedName(db);
        if (name !== undefined && parseNamespace(name).hash === entry.name) found.push({ name, hash: entry.name, file });
      } finally {
        db.close();
      }
    }
    return found.sort((a, b) => a.name.localeCompare(b.name));
  }

  /** Database folders by hash, whatever state they are in (for `ward doctor`). */
  namespaceFiles(): string[] {
    const root = path.join(this.home, 'namespaces');
    if (!fs.existsSync(root)) return [];
    return fs
      .readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => path.join(root, entry.name, 'ward.db'))
      .filter((file) => fs.existsSync(file));
  }

  private homeChecked = false;

  /**
   * The data folder must be a folder only its user can write: another user able to write it could
   * swap databases or settings. Refused with what to do, before anything is written.
   */
  private checkHome(): void {
    if (this.homeChecked) return;
    let stat: fs.Stats;
    try {
      stat = fs.statSync(this.home);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
        fs.mkdirSync(this.home, { recursive: true, mode: 0o700 });
        this.homeChecked = true;
        return;
      }
      if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') throw new WardError('store_unavailable', `the data folder ${this.home} cannot be made: a file is in its path (WARD_HOME must name a folder)`);
      throw new WardError('store_unavailable', `the data folder ${this.home} cannot be read: ${(error as Error).message}`, { cause: error });
    }
    if (!stat.isDirectory()) throw new WardError('store_unavailable', `the data folder ${this.home} is a file, not a folder (WARD_HOME must name a folder)`);
    if (process.platform !== 'win32' && (stat.mode & 0o022) !== 0) {
      throw new WardError('store_unavailable', `the data folder ${this.home} can be written by other users (mode ${(stat.mode & 0o777).toString(8)}); run "chmod 700 ${this.home}" and try again`);
    }
    this.homeChecked = true;
  }

  close(): void {
    for (const store of [...this.stores.values(), ...this.readOnlyStores.values()]) store.close();
    this.stores.clear();
    this.readOnlyStores.clear();
  }
}
