import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileIdentity } from '../base/file-identity.js';
import { SETTINGS_FILE } from '../base/settings-file.js';
import type { Namespace } from '../namespaces/namespace.js';
import { modelCredentialStamp, resolveModelCredential, VARIABLE_FOR } from '../credentials/model-credential.js';
import { openSecretStore, type OpenStoreOptions } from '../credentials/open-store.js';
import type { ModelCredential } from '../credentials/model-credential.js';

/** A file's identity for a validity check (as the pinned CLI's verified record uses it); 'absent' when there is none. */
function fileStamp(file: string): string {
  try {
    return JSON.stringify(fileIdentity(fs.statSync(file)));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw error;
  }
}

/**
 * Everything a read of the credential depends on but the store's content: the stamp Ward rewrites
 * whenever it stores or deletes the key (any Ward process), settings.json (which store), and the
 * environment's fallback (hashed: the stamp holds no secret). Null when it cannot be told.
 */
function readingStamp(home: string, ns: Namespace, env: NodeJS.ProcessEnv): string | null {
  try {
    const fallback = createHash('sha256').update(JSON.stringify(Object.values(VARIABLE_FOR).map((name) => env[name] ?? null))).digest('hex');
    return `${fileStamp(modelCredentialStamp(home, ns))}|${fileStamp(path.join(home, SETTINGS_FILE))}|${fallback}`;
  } catch {
    return null;
  }
}

/**
 * The model credential of a namespace's runs, for the desktop and `ward run` alike: the
 * namespace's stored key (keychain, or the configured store) wins; only when none is stored,
 * Ward's environment. An unreachable store is an error (C1), never a silent fallback.
 *
 * Read once and kept in this process while nothing it depends on changed (issue 29): a warm
 * turn and each of its model calls then cost a few stats, not a keychain round trip. Ward's own
 * writes of the key rewrite the namespace's stamp (SettingsService), so a key set or deleted in
 * any Ward process is read again at the next use. A failed read keeps nothing.
 */
export function storedModelCredential(home: string, stores: OpenStoreOptions = {}): (ns: Namespace, env: NodeJS.ProcessEnv) => Promise<ModelCredential> {
  // The read itself is kept, so two uses at once (`ward run`'s head start and its preflight) read the store once.
  const kept = new Map<string, { readonly stamp: string; readonly credential: Promise<ModelCredential> }>();
  return (ns, env) => {
    // Taken before the read: a change made while the store is read makes the next use read again.
    const stamp = readingStamp(home, ns, env);
    const hit = kept.get(ns.hash);
    if (stamp !== null && hit?.stamp === stamp) return hit.credential;
    const credential = resolveModelCredential(ns, env, { home, store: openSecretStore(home, ns, stores) });
    if (stamp === null) kept.delete(ns.hash);
    else kept.set(ns.hash, { stamp, credential });
    credential.catch(() => {
      if (kept.get(ns.hash)?.credential === credential) kept.delete(ns.hash);
    });
    return credential;
  };
}
