/**
 * The keys a namespace keeps in its credential store (C1) for its journal: the Ed25519 key that
 * signs export bundles (E2) and the key that anchors chain heads after each run (J3). Each is
 * made on first use under the account's lock, so two Ward processes never make two.
 */
import { randomBytes } from 'node:crypto';
import { WardError } from '../base/errors.js';
import { lockPath, withLock } from '../credentials/lock.js';
import { openSecretStore, type OpenStoreOptions } from '../credentials/open-store.js';
import type { SecretStore } from '../credentials/secret-store.js';
import fs from 'node:fs';
import { writeNewFile } from '../export/bundle-writer.js';
import { generateSigningKey, loadSigningKey, type SigningKey } from '../export/signing.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';

export const SIGNING_KEY_ACCOUNT = 'export-signing-key';
export const ANCHOR_KEY_ACCOUNT = 'journal-anchor-key';

export class NamespaceKeys {
  private readonly anchorKeys = new Map<string, Buffer>();

  constructor(
    private readonly home: string,
    private readonly storeOptions: OpenStoreOptions = {},
  ) {}

  secretStore(ns: Namespace): SecretStore {
    return openSecretStore(this.home, ns, this.storeOptions);
  }

  /** The namespace's signing key; made when `create` and there is none yet, else null. */
  async signingKey(ns: Namespace, create: boolean): Promise<SigningKey | null> {
    const pem = await this.secret(ns, SIGNING_KEY_ACCOUNT, create ? generateSigningKey : null);
    return pem === undefined ? null : loadSigningKey(pem);
  }

  /**
   * Writes the public half of the signing key to a new file (never over an existing one), making the
   * key first if there is none: handing out the public key is how a signer is pinned before the first bundle.
   */
  async writePublicKey(ns: Namespace, file: string): Promise<SigningKey> {
    const key = (await this.signingKey(ns, true))!;
    writeNewFile(file, (fd) => fs.writeSync(fd, key.pem));
    return key;
  }

  /** The namespace's anchor key (cached for the process: it is read after every run). */
  async anchorKey(ns: Namespace, create: boolean): Promise<Buffer | null> {
    const cached = this.anchorKeys.get(ns.hash);
    if (cached !== undefined) return cached;
    const encoded = await this.secret(ns, ANCHOR_KEY_ACCOUNT, create ? () => randomBytes(32).toString('base64') : null);
    if (encoded === undefined) return null;
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32) throw new WardError('credential_missing', `the journal anchor key of namespace ${ns.name} is unreadable; it was left as it is`);
    this.anchorKeys.set(ns.hash, key);
    return key;
  }

  private async secret(ns: Namespace, account: string, make: (() => string) | null): Promise<string | undefined> {
    const store = this.secretStore(ns);
    const existing = await store.get(account);
    if (existing !== undefined || make === null) return existing;
    return withLock(lockPath(namespaceDir(this.home, ns), account), async () => {
      const again = await store.get(account);
      if (again !== undefined) return again;
      const value = make();
      await store.set(account, value);
      return value;
    });
  }
}
