import type { SecretStore } from '../credentials/secret-store.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import { lockPath } from '../credentials/lock.js';
import { SessionRegistry, type SessionRecord } from './registry.js';

/** Where one namespace keeps its sign-ins: the registry (public) and the secret store (tokens). */
export interface AuthContext {
  readonly home: string;
  readonly namespace: Namespace;
  readonly store: SecretStore;
  /** Bound on each request to the provider; defaults to 30 s. */
  readonly requestTimeoutMs?: number;
  /** Bound on waiting for another process's lock; defaults to 15 s. */
  readonly lockTimeoutMs?: number;
}

export function registryOf(context: AuthContext): SessionRegistry {
  return new SessionRegistry(context.home, context.namespace);
}

/** Refresh and compare-before-delete of one session hold this lock (lock order: registry, then session). */
export function sessionLockPath(context: AuthContext, record: Pick<SessionRecord, 'id'>): string {
  return lockPath(namespaceDir(context.home, context.namespace), `session:${record.id}`);
}
