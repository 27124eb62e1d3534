import { createHash } from 'node:crypto';
import path from 'node:path';
import { WardError } from '../base/errors.js';

/** N1: lowercase letters, digits and `-`, 1 to 32 characters. */
const NAMESPACE_PATTERN = /^[a-z0-9-]{1,32}$/;
export const NAMESPACE_RULE = 'lowercase letters, digits and "-", 1 to 32 characters';
export const DEFAULT_NAMESPACE = 'default';

export interface Namespace {
  readonly name: string;
  /** Hex SHA-256 of the name (domain-separated); the only form that names paths, accounts, locks. */
  readonly hash: string;
}

export function parseNamespace(name: string): Namespace {
  if (typeof name !== 'string' || !NAMESPACE_PATTERN.test(name)) {
    const shown = JSON.stringify(String(name).slice(0, 40));
    throw new WardError('invalid_namespace', `invalid namespace name ${shown}: use ${NAMESPACE_RULE}`);
  }
  const hash = createHash('sha256').update(`ward-namespace\0${name}`).digest('hex');
  return { name, hash };
}

export function namespaceDir(home: string, ns: Namespace): string {
  return path.join(home, 'namespaces', ns.hash);
}

/**
 * The namespace is fixed by the host: a `--namespace` flag, `WARD_NAMESPACE`, or admin policy.
 * Two sources that disagree fail closed instead of guessing which one the person meant.
 */
export function resolveNamespace(sources: { flag?: string | undefined; env?: string | undefined; policy?: string | undefined }): Namespace {
  const named = Object.entries(sources).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[1] !== '');
  const distinct = new Set(named.map(([, value]) => value));
  if (distinct.size > 1) {
    const list = named.map(([source, value]) => `${source}=${JSON.stringify(value)}`).join(', ');
    throw new WardError('namespace_conflict', `conflicting namespace settings (${list}); set only one`);
  }
  return parseNamespace(named[0]?.[1] ?? DEFAULT_NAMESPACE);
}

/**
 * A `ward` command for a hint, quoted, that acts on `ns` when followed literally (whatever
 * WARD_NAMESPACE says in the shell it is typed into).
 */
export function wardCommand(ns: Namespace, command: string): string {
  return `"ward --namespace ${ns.name} ${command}"`;
}
