import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../base/errors.js';
import { lockPath, withLock } from '../credentials/lock.js';
import { shortHash } from '../credentials/secret-store.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';

/**
 * One sign-in as the registry remembers it: public metadata only (C4). Tokens live in the
 * credential store under `account`; nothing here grants anything.
 */
export interface SessionRecord {
  /** Opaque local instance id; a re-login gets a new one, so old and new never share an entry. */
  readonly id: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly subject: string;
  readonly scope: string;
  readonly allowInsecureHttp: boolean;
  readonly signedInAt: string;
  /** When the access token last stored expires (refresh renews it), if the provider said. */
  readonly expiresAt: string | null;
  /** An older session replaced by a newer login whose revocation could not be done yet. */
  readonly cleanupPending: boolean;
}

const REGISTRY_FILE = 'signin-registry.json';
const MAX_REGISTRY_BYTES = 1024 * 1024;
const FIELDS = ['id', 'issuer', 'clientId', 'subject', 'scope', 'allowInsecureHttp', 'signedInAt', 'expiresAt', 'cleanupPending'] as const;

export function newSessionId(): string {
  return randomBytes(12).toString('hex');
}

/** The credential-store account of a session: binding hash (issuer + client) and instance id. */
export function sessionAccount(record: Pick<SessionRecord, 'issuer' | 'clientId' | 'id'>): string {
  return `oidc:${shortHash(`${record.issuer}\0${record.clientId}`)}:${record.id}`;
}

function invalid(file: string, why: string): WardError {
  return new WardError('store_corrupt', `the sign-in registry ${file} is malformed (${why}); move it aside and sign in again`);
}

function parseRecord(file: string, value: unknown): SessionRecord {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw invalid(file, 'an entry is not an object');
  const entry = value as Record<string, unknown>;
  const extra = Object.keys(entry).filter((key) => !(FIELDS as readonly string[]).includes(key));
  if (extra.length > 0) throw invalid(file, `unexpected field ${JSON.stringify(extra[0])}`);
  for (const key of ['id', 'issuer', 'clientId', 'subject', 'scope', 'signedInAt'] as const) {
    if (typeof entry[key] !== 'string') throw invalid(file, `${key} is not a string`);
  }
  if (!/^[0-9a-f]{24}$/.test(entry.id as string)) throw invalid(file, 'bad id');
  if (typeof entry.allowInsecureHttp !== 'boolean' || typeof entry.cleanupPending !== 'boolean') throw invalid(file, 'a flag is not a boolean');
  if (entry.expiresAt !== null && typeof entry.expiresAt !== 'string') throw invalid(file, 'expiresAt is not a string');
  return entry as unknown as SessionRecord;
}

/** The namespace's sign-in registry: a small JSON file, replaced atomically under a cross-process lock. */
export class SessionRegistry {
  readonly file: string;
  private readonly lock: string;

  constructor(home: string, readonly namespace: Namespace) {
    const dir = namespaceDir(home, namespace);
    this.file = path.join(dir, REGISTRY_FILE);
    this.lock = lockPath(dir, 'signin-registry');
  }

  list(): SessionRecord[] {
    let raw: string;
    try {
      if (fs.statSync(this.file).size > MAX_REGISTRY_BYTES) throw invalid(this.file, 'too large');
      raw = fs.readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch {
      throw invalid(this.file, 'not JSON');
    }
    const sessions = (parsed as { v?: unknown; sessions?: unknown }).sessions;
    if ((parsed as { v?: unknown }).v !== 1 || !Array.isArray(sessions)) throw invalid(this.file, 'unknown version');
    return sessions.map((entry) => parseRecord(this.file, entry));
  }

  /** Read-modify-write under the registry lock; `change` returns the new list and a result. */
  mutate<T>(change: (records: SessionRecord[]) => Promise<{ records: SessionRecord[]; result: T }> | { records: SessionRecord[]; result: T }): Promise<T> {
    return withLock(this.lock, async () => {
      const { records, result } = await change(this.list());
      this.write(records);
      return result;
    });
  }

  private write(records: SessionRecord[]): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const clean = records.map((record) => Object.fromEntries(FIELDS.map((key) => [key, record[key]])));
    const temp = `${this.file}.${randomBytes(6).toString('hex')}.tmp`;
    fs.writeFileSync(temp, `${JSON.stringify({ v: 1, sessions: clean }, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    fs.renameSync(temp, this.file);
  }
}
