import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import { DpapiBackend } from './dpapi-store.js';
import { FileBackend } from './file-store.js';
import { KeychainBackend } from './keychain-store.js';
import { KEYCHAIN_SERVICE, NamespacedSecretStore, shortHash, type SecretBackend, type SecretStore } from './secret-store.js';
import { resolveWardHome } from '../base/home.js';

export type CredentialStoreKind = 'keychain' | 'file' | 'dpapi';
const KINDS: readonly CredentialStoreKind[] = ['keychain', 'file', 'dpapi'];
export const SETTINGS_FILE = 'settings.json';
const MAX_SETTINGS_BYTES = 64 * 1024;

/**
 * `<WARD_HOME>/settings.json`, the data folder's settings (an IT admin may ship it), as an object;
 * absent is empty. A malformed or oversized file fails closed (L1); each reader checks its own key.
 */
export function readSettings(home: string): { readonly file: string; readonly values: Readonly<Record<string, unknown>> } {
  const file = path.join(home, SETTINGS_FILE);
  let raw: string;
  try {
    if (fs.statSync(file).size > MAX_SETTINGS_BYTES) throw new WardError('invalid_config', `${file} is larger than ${MAX_SETTINGS_BYTES} bytes`);
    raw = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { file, values: {} };
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new WardError('invalid_config', `${file} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new WardError('invalid_config', `${file} must hold a JSON object`);
  return { file, values: parsed as Record<string, unknown> };
}

/**
 * The store kind from settings.json ("credentialStore"). Absent means the OS keychain; an
 * unknown value fails closed (L1) rather than guessing.
 */
export function configuredStoreKind(home: string): CredentialStoreKind {
  const { file, values } = readSettings(home);
  const value = values.credentialStore;
  if (value === undefined) return 'keychain';
  if (typeof value !== 'string' || !KINDS.includes(value as CredentialStoreKind)) {
    throw new WardError('invalid_config', `${file}: "credentialStore" must be one of ${KINDS.map((kind) => `"${kind}"`).join(', ')}`);
  }
  return value as CredentialStoreKind;
}

export interface OpenStoreOptions {
  /** Overrides settings.json (tests, and hosts that decide the store themselves). */
  kind?: CredentialStoreKind;
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
      return new KeychainBackend({ service: keychainServiceFor(home) });
    case 'file':
      return new FileBackend(path.join(namespaceDir(home, ns), 'secrets'));
    case 'dpapi':
      if (platform !== 'win32') throw new WardError('invalid_config', '"credentialStore": "dpapi" is for Windows only');
      return new DpapiBackend();
  }
}

/** The secret store of one namespace, as configured for this data folder. */
export function openSecretStore(home: string, ns: Namespace, options: OpenStoreOptions = {}): SecretStore {
  const backend = options.backend ?? backendFor(home, ns, options.kind ?? configuredStoreKind(home), options.platform);
  return new NamespacedSecretStore(ns, backend);
}
