import type { Namespace } from '../namespaces/namespace.js';
import { resolveModelCredential } from '../credentials/model-credential.js';
import { openSecretStore, type OpenStoreOptions } from '../credentials/open-store.js';
import type { ModelCredential } from '../credentials/model-credential.js';

/**
 * The model credential of a namespace's runs, for the desktop and `ward run` alike: the
 * namespace's stored key (keychain, or the configured store) wins; only when none is stored,
 * Ward's environment. An unreachable store is an error (C1), never a silent fallback.
 */
export function storedModelCredential(home: string, stores: OpenStoreOptions = {}): (ns: Namespace, env: NodeJS.ProcessEnv) => Promise<ModelCredential> {
  return (ns, env) => resolveModelCredential(ns, env, { home, store: openSecretStore(home, ns, stores) });
}
