import type { SecretStore } from '../credentials/secret-store.js';

/** Fields of a stored OAuth record (tokens, client registration) whose values are credentials. */
const CREDENTIAL_FIELDS = ['access_token', 'refresh_token', 'id_token', 'client_secret'] as const;

/** The credential values inside one stored secret: a token record's credential fields, or the value itself. */
export function credentialValues(stored: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stored);
  } catch {
    return [stored];
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return [stored];
  const record = parsed as Record<string, unknown>;
  return CREDENTIAL_FIELDS.map((field) => record[field]).filter((value): value is string => typeof value === 'string' && value !== '');
}

/**
 * The store, telling `onSecret` every credential value read from or written to it, so whatever a
 * run journals (a tool result that echoes a server's secret variable or token) is redacted (C3).
 */
export function watchedSecrets(store: SecretStore, onSecret: (value: string) => void): SecretStore {
  const seen = (value: string | undefined): void => {
    if (value !== undefined) for (const secret of credentialValues(value)) onSecret(secret);
  };
  return {
    namespace: store.namespace,
    async get(account) {
      const value = await store.get(account);
      seen(value);
      return value;
    },
    async set(account, secret) {
      seen(secret);
      await store.set(account, secret);
    },
    delete: (account) => store.delete(account),
    compareAndDelete: (account, expected) => store.compareAndDelete(account, expected),
    entries: () => store.entries(),
  };
}
