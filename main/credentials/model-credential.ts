import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import { resolveWardHome } from '../base/home.js';
import { namespaceDir, wardCommand, type Namespace } from '../namespaces/namespace.js';
import { openSecretStore } from './open-store.js';
import type { SecretStore } from './secret-store.js';

export type ModelCredentialKind = 'api-key' | 'oauth-token';
export type ModelCredentialVariable = 'ANTHROPIC_API_KEY' | 'CLAUDE_CODE_OAUTH_TOKEN';

/** The model credential, in one spelling wherever Ward stores, sends or tells the child of it. */
export interface ModelCredential {
  readonly kind: ModelCredentialKind;
  readonly value: string;
}

export const MODEL_KEY_ACCOUNT = 'model-key';
export const VARIABLE_FOR: Readonly<Record<ModelCredentialKind, ModelCredentialVariable>> = {
  'api-key': 'ANTHROPIC_API_KEY',
  'oauth-token': 'CLAUDE_CODE_OAUTH_TOKEN',
};
const MAX_KEY_LENGTH = 4_096;
/** The prefix `claude setup-token` prints; used only to pick a default kind. */
const OAUTH_TOKEN_PREFIX = 'sk-ant-oat';
const howToSet = (ns: Namespace): string => `store one with ${wardCommand(ns, 'provider set-key')} (it reads the key from stdin)`;

interface Stored {
  v: 1;
  kind: ModelCredentialKind;
  secret: string;
}

export function parseKind(value: string): ModelCredentialKind {
  if (value === 'api-key' || value === 'oauth-token') return value;
  // Never echo the value: a key pasted in the wrong place must not reach a log.
  throw new WardError('usage', 'unknown credential kind: use api-key or oauth-token');
}

/** Trims the line end a pipe or terminal adds; anything else unusual is refused, never echoed. */
export function normalizeModelSecret(input: string): string {
  const secret = input.replace(/\r?\n$/, '');
  if (secret.length === 0) throw new WardError('usage', 'no key on stdin: pipe or paste the key, then end input (Ctrl-D)');
  if (secret.length > MAX_KEY_LENGTH) throw new WardError('usage', `the key on stdin is longer than ${MAX_KEY_LENGTH} characters`);
  if (!/^[\x21-\x7e]+$/.test(secret)) throw new WardError('usage', 'the key on stdin has spaces, line breaks or non-ASCII characters; give exactly one key');
  return secret;
}

export function inferKind(secret: string): ModelCredentialKind {
  return secret.startsWith(OAUTH_TOKEN_PREFIX) ? 'oauth-token' : 'api-key';
}

function decode(raw: string, ns: Namespace): Stored {
  try {
    const parsed = JSON.parse(raw) as Partial<Stored>;
    if (parsed.v === 1 && (parsed.kind === 'api-key' || parsed.kind === 'oauth-token') && typeof parsed.secret === 'string' && parsed.secret !== '') {
      return parsed as Stored;
    }
  } catch {
    // fall through: never echo what the store held
  }
  throw new WardError('model_key_missing', `the stored model credential is unreadable; ${howToSet(ns)}`);
}

export async function setModelCredential(store: SecretStore, kind: ModelCredentialKind, secret: string): Promise<void> {
  const stored: Stored = { v: 1, kind, secret: normalizeModelSecret(secret) };
  await store.set(MODEL_KEY_ACCOUNT, JSON.stringify(stored));
}

/** Whether a credential is stored and its kind: never the value, not even a part of it. */
export async function modelCredentialStatus(store: SecretStore): Promise<{ set: false } | { set: true; kind: ModelCredentialKind }> {
  const raw = await store.get(MODEL_KEY_ACCOUNT);
  if (raw === undefined) return { set: false };
  return { set: true, kind: decode(raw, store.namespace).kind };
}

export function deleteModelCredential(store: SecretStore): Promise<boolean> {
  return store.delete(MODEL_KEY_ACCOUNT);
}

/**
 * The namespace's model-credential stamp: Ward rewrites it (a new file, so a new inode) each time
 * it stores or deletes the model credential, so a process that keeps the credential it read
 * (main/app/model-credential.ts) knows, with one stat, that it must read the store again.
 */
export function modelCredentialStamp(home: string, ns: Namespace): string {
  return path.join(namespaceDir(home, ns), 'model-credential.stamp');
}

/** Says the namespace's model credential changed: called after every store or delete of it (`onlyIfStamped`: a failed one, which must not create the file). */
export function markModelCredentialChanged(home: string, ns: Namespace, options: { readonly onlyIfStamped?: boolean } = {}): void {
  const file = modelCredentialStamp(home, ns);
  if (options.onlyIfStamped === true && !fs.existsSync(file)) return;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, randomBytes(16).toString('hex'), { mode: 0o600 });
  fs.renameSync(temp, file);
}

/**
 * The model credential for a run of `namespace`. Precedence: the namespace's stored credential
 * (keychain, or the configured store) wins; only when nothing is stored, the process
 * environment: ANTHROPIC_API_KEY, then CLAUDE_CODE_OAUTH_TOKEN. An unreachable store is an
 * error, not a reason to use the environment: Ward never switches credentials silently.
 */
export async function resolveModelCredential(
  namespace: Namespace,
  env: NodeJS.ProcessEnv,
  options: { home?: string; store?: SecretStore } = {},
): Promise<ModelCredential> {
  const store = options.store ?? openSecretStore(options.home ?? resolveWardHome(env), namespace);
  const raw = await store.get(MODEL_KEY_ACCOUNT);
  if (raw !== undefined) {
    const stored = decode(raw, namespace);
    return { kind: stored.kind, value: stored.secret };
  }
  for (const kind of ['api-key', 'oauth-token'] as const) {
    const value = env[VARIABLE_FOR[kind]];
    if (value !== undefined && value !== '') return { kind, value };
  }
  throw new WardError('model_key_missing', `no model credential for namespace ${namespace.name}: ${howToSet(namespace)}, or set ANTHROPIC_API_KEY`);
}
