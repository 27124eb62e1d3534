/**
 * Which namespace a request works in (N1). The admin policy or WARD_NAMESPACE may fix it; a name
 * that disagrees with the fixed one fails closed. Only the default namespace (or the fixed one)
 * comes into being on first use: any other must be created on purpose, so a typo never silently
 * starts an empty namespace.
 */
import { WardError } from '../base/errors.js';
import { DEFAULT_NAMESPACE, parseNamespace, resolveNamespace, type Namespace } from '../namespaces/namespace.js';
import type { AdminPolicy } from '../policy/policy.js';
import type { DataFolder, NamespaceSummary } from '../store/data-folder.js';
import type { NamespaceStore } from '../store/namespace-store.js';

// What the adapters may know of a namespace: its name and how to tell a person to address it.
export { parseNamespace, wardCommand, type Namespace } from '../namespaces/namespace.js';
export type { NamespaceStore } from '../store/namespace-store.js';

export class NamespaceService {
  /** The only namespace this Ward may use, when the policy or WARD_NAMESPACE fixes one. */
  readonly fixed: string | undefined;

  /** The namespaces this process has opened for writing (each is recovered once, on its first open). */
  private readonly opened = new Set<string>();

  /** @param onFirstOpen what a process finishes in a namespace before its first use (an interrupted rewind). */
  constructor(
    readonly folder: DataFolder,
    private readonly env: NodeJS.ProcessEnv,
    private readonly policy: AdminPolicy | null,
    private readonly onFirstOpen: (store: NamespaceStore) => void = () => undefined,
  ) {
    this.fixed = env.WARD_NAMESPACE || policy?.namespace ? resolveNamespace({ env: env.WARD_NAMESPACE, policy: policy?.namespace ?? undefined }).name : undefined;
  }

  get home(): string {
    return this.folder.home;
  }

  /** A `--namespace` flag against WARD_NAMESPACE and the policy: sources that disagree fail closed. */
  resolve(flag: string | undefined): Namespace {
    return resolveNamespace({ flag, env: this.env.WARD_NAMESPACE, policy: this.policy?.namespace ?? undefined });
  }

  /** The store for a `--namespace` flag: the flag, WARD_NAMESPACE and the policy must agree. */
  fromFlag(flag: string | undefined): NamespaceStore {
    return this.storeOf(this.resolve(flag));
  }

  /** The store for a `--namespace` flag, opened read-only: reading migrates, creates and marks nothing. */
  readOnly(flag: string | undefined): NamespaceStore {
    return this.folder.readOnlyStore(this.resolve(flag));
  }

  /**
   * The namespace of a `--namespace` flag, without opening its database (credential commands
   * write nothing they do not need). It must exist; only "default" comes into being on use.
   */
  existing(flag: string | undefined): Namespace {
    const ns = this.resolve(flag);
    if (ns.name !== DEFAULT_NAMESPACE && ns.name !== this.fixed && !this.folder.namespaceExists(ns)) {
      throw new WardError('namespace_not_found', `no namespace ${ns.name}; create it with "ward namespace create ${ns.name}"`, {
        desktop: `There is no namespace ${ns.name}: choose another in the namespace list.`,
      });
    }
    return ns;
  }

  /** The store of the namespace a window chose: only the fixed one, when there is one. */
  open(name: string): NamespaceStore {
    if (this.fixed !== undefined && name !== this.fixed) throw this.fixedError(name);
    return this.storeOf(parseNamespace(name));
  }

  private storeOf(ns: Namespace): NamespaceStore {
    // A namespace fixed by the admin is not a typo: it comes into being on first use.
    const store = this.folder.store(ns, { mustExist: ns.name !== this.fixed });
    if (!this.opened.has(ns.name)) {
      this.opened.add(ns.name);
      this.onFirstOpen(store);
    }
    return store;
  }

  /** Namespaces the person can pick (the fixed one only, when there is one). */
  list(): string[] {
    if (this.fixed !== undefined) return [this.fixed];
    const names = new Set(this.folder.listNamespaces().map((ns) => ns.name));
    names.add(DEFAULT_NAMESPACE);
    return [...names].sort();
  }

  /** Every namespace on disk, with its hash and database file. */
  summaries(): NamespaceSummary[] {
    return this.folder.listNamespaces();
  }

  create(name: string): NamespaceSummary {
    if (this.fixed !== undefined && name !== this.fixed) throw this.fixedError(name);
    return this.folder.createNamespace(name);
  }

  private fixedError(name: string): WardError {
    return new WardError('namespace_conflict', `this Ward is fixed to namespace ${this.fixed} (admin policy or WARD_NAMESPACE); ${JSON.stringify(name.slice(0, 40))} is not available`);
  }
}
