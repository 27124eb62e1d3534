import { createHash, timingSafeEqual } from 'node:crypto';
import { WardError } from '../base/errors.js';
import type { Namespace } from '../namespaces/namespace.js';

/**
 * A namespace's secrets. `account` is a purpose inside the namespace (`model-key`,
 * `oidc:<binding hash>:<id>`, `mcp:<connection>`); the store prefixes the namespace hash, so
 * two namespaces can never name each other's entries (N1).
 */
export interface SecretStore {
  readonly namespace: Namespace;
  get(account: string): Promise<string | undefined>;
  set(account: string, secret: string): Promise<void>;
  /** True when something was deleted. */
  delete(account: string): Promise<boolean>;
  /**
   * Deletes only when the stored value still equals `expected` (C4). Atomic against other
   * processes only while the caller holds the account's lock (see AccountLocks).
   */
  compareAndDelete(account: string, expected: string): Promise<boolean>;
  /** Every secret this namespace holds, by account (E3: what an export must never contain). */
  entries(): Promise<Array<{ readonly account: string; readonly secret: string }>>;
}

/** What an OS store (keytar, DPAPI helper, file store) offers: flat names, no namespaces. */
export interface SecretBackend {
  readonly kind: 'keychain' | 'file' | 'dpapi';
  get(entry: string): Promise<string | undefined>;
  set(entry: string, secret: string): Promise<void>;
  delete(entry: string): Promise<boolean>;
  /** Entries whose name starts with `prefix`, with their secrets. */
  list(prefix: string): Promise<Array<{ readonly entry: string; readonly secret: string }>>;
}

/** The keychain service every entry lives under. */
export const KEYCHAIN_SERVICE = 'ward';

const ACCOUNT_PATTERN = /^[a-z][a-z0-9-]*(:[A-Za-z0-9._-]{1,128}){0,3}$/;
export const MAX_SECRET_BYTES = 64 * 1024;

export function checkAccount(account: string): string {
  if (typeof account !== 'string' || account.length > 256 || !ACCOUNT_PATTERN.test(account)) {
    throw new WardError('internal', `invalid credential account name ${JSON.stringify(String(account).slice(0, 60))}`);
  }
  return account;
}

export function checkSecret(secret: string): string {
  if (typeof secret !== 'string' || secret.length === 0) throw new WardError('usage', 'the secret is empty');
  if (Buffer.byteLength(secret) > MAX_SECRET_BYTES) throw new WardError('usage', `the secret is larger than ${MAX_SECRET_BYTES} bytes`);
  return secret;
}

/** The flat entry name an OS store sees: namespace hash, then the purpose. */
export function entryName(ns: Namespace, account: string): string {
  return `${ns.hash}/${checkAccount(account)}`;
}

/** A short, stable, non-reversible name for values such as issuer URLs inside account names. */
export function shortHash(value: string): string {
  return createHash('sha256').update(value).digest('hex').slice(0, 32);
}

export function sameSecret(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
}

export class NamespacedSecretStore implements SecretStore {
  constructor(
    readonly namespace: Namespace,
    readonly backend: SecretBackend,
  ) {}

  get(account: string): Promise<string | undefined> {
    return this.backend.get(entryName(this.namespace, account));
  }

  set(account: string, secret: string): Promise<void> {
    return this.backend.set(entryName(this.namespace, account), checkSecret(secret));
  }

  delete(account: string): Promise<boolean> {
    return this.backend.delete(entryName(this.namespace, account));
  }

  async compareAndDelete(account: string, expected: string): Promise<boolean> {
    const current = await this.get(account);
    if (current === undefined || !sameSecret(current, expected)) return false;
    return this.delete(account);
  }

  async entries(): Promise<Array<{ readonly account: string; readonly secret: string }>> {
    const prefix = `${this.namespace.hash}/`;
    return (await this.backend.list(prefix)).map(({ entry, secret }) => ({ account: entry.slice(prefix.length), secret }));
  }
}
