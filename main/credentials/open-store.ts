import path from 'node:path';
import { WardError } from '../base/errors.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import { DpapiBackend } from './dpapi-store.js';
import { FileBackend } from './file-store.js';
import { KeychainBackend } from './keychain-store.js';
import { KEYCHAIN_SERVICE, NamespacedSecretStore, shortHash, type SecretBackend, type SecretStore } from './secret-store.js';
import { resolveWardHome } from '../base/home.js';
import { readSettingsObject, SETTINGS_FILE } from '../base/settings-file.js';

export type CredentialStoreKind = 'keychain' | 'file' | 'dpapi';
const KINDS: readonly CredentialStoreKind[] = ['keychain', 'file', 'dpapi'];
/** What an admin policy says about the store (its credentialStore and allowFileCredentialStore keys). */
export interface ManagedStore {
  /** Mandatory: this store, whatever settings.json says. */
  readonly forced?: CredentialStoreKind;
  /** Recommended: the store when settings.json names none. */
  readonly preferred?: CredentialStoreKind;
  /** False: the file store is refused. */
  readonly fileAllowed: boolean;
  /** Who says so, for refusals. */
  readonly by: string;
}

/** The store settings.json names, or undefined; a malformed file or an unknown value fails closed (L1). */
function settingsStoreKind(home: string): CredentialStoreKind | undefined {
  const value = readSettingsObject(home).credentialStore;
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !KINDS.includes(value as CredentialStoreKind)) {
    throw new WardError('invalid_config', `${path.join(home, SETTINGS_FILE)}: "credentialStore" must be one of ${KINDS.map((kind) => `"${kind}"`).join(', ')}`);
  }
  return value as CredentialStoreKind;
}

/**
 * The store kind: the admin policy's mandatory choice, else `<WARD_HOME>/settings.json`
 * ("credentialStore"), else the policy's recommended one, else the OS keychain. A file store the
 * policy does not allow is refused, never swapped for another silently.
 */
export function configuredStoreKind(home: string, managed?: ManagedStore): CredentialStoreKind {
  const kind = managed?.forced ?? settingsStoreKind(home) ?? managed?.preferred ?? 'keychain';
  if (kind === 'file' && managed !== undefined && !managed.fileAllowed) {
    throw new WardError('policy_refused', `the file credential store is not allowed (allowFileCredentialStore is false): refused by ${managed.by}; remove "credentialStore" from ${path.join(home, SETTINGS_FILE)} to use the OS keychain`);
  }
  return kind;
}

export interface OpenStoreOptions {
  /** Overrides settings.json (tests, and hosts that decide the store themselves). */
  kind?: CredentialStoreKind;
  /** The admin policy's say (applied with settings.json when `kind` is not given). */
  managed?: ManagedStore;
  /** An already built backend (tests), used as is. */
  backend?: SecretBackend;
  platform?: NodeJS.Platform;
}

/**
 * The keychain service for a data folder: `ward` for the standard one, `ward/<hash of the path>`
 * for any other (a WARD_HOME override), so two data folders never share a secret.
 */
export function keychainServiceFor(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const standard = resolveWardHome({ ...env, WARD_HOME: '' });
  const resolved = path.resolve(home);
  return resolved === standard ? KEYCHAIN_SERVICE : `${KEYCHAIN_SERVICE}/${shortHash(resolved)}`;
}

export function backendFor(home: string, ns: Namespace, kind: CredentialStoreKind, platform: NodeJS.Platform = process.platform): SecretBackend {
  switch (kind) {
    case 'keychain':
      return new KeychainBackend({ service: keychainServiceFor(home), settingsFile: path.join(home, SETTINGS_FILE) });
    case 'file':
      return new FileBackend(path.join(namespaceDir(home, ns), 'secrets'));
    case 'dpapi':
      if (platform !== 'win32') throw new WardError('invalid_config', '"credentialStore": "dpapi" is for Windows only');
      return new DpapiBackend();
  }
}

/** The secret store of one namespace, as configured for this data folder. */
export function openSecretStore(home: string, ns: Namespace, options: OpenStoreOptions = {}): SecretStore {
  const backend = options.backend ?? backendFor(home, ns, options.kind ?? configuredStoreKind(home, options.managed), options.platform);
  return new NamespacedSecretStore(ns, backend);
}
