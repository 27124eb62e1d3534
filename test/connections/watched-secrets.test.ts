import { describe, expect, it } from 'vitest';
import { credentialValues, watchedSecrets } from '../../main/connections/watched-secrets.js';
import type { SecretStore } from '../../main/credentials/secret-store.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';

function memoryStore(): SecretStore {
  const values = new Map<string, string>();
  return {
    namespace: parseNamespace('default'),
    get: async (account) => values.get(account),
    set: async (account, secret) => void values.set(account, secret),
    delete: async (account) => values.delete(account),
    entries: async () => [...values].map(([account, secret]) => ({ account, secret })),
    compareAndDelete: async (account, expected) => values.get(account) === expected && values.delete(account),
  };
}

describe('the credential values a run must redact (issue 12 #5)', () => {
  it('test_a_stored_token_record_yields_its_tokens_and_client_secret_not_its_scope_or_type', () => {
    const record = JSON.stringify({ access_token: 'at-1234567890', refresh_token: 'rt-1234567890', token_type: 'Bearer', scope: 'read write', expires_in: 3600 });
    expect(credentialValues(record)).toEqual(['at-1234567890', 'rt-1234567890']);
    expect(credentialValues(JSON.stringify({ client_id: 'ward', client_secret: 'cs-abcdefgh' }))).toEqual(['cs-abcdefgh']);
    expect(credentialValues('plain-secret-env-value')).toEqual(['plain-secret-env-value']);
    expect(credentialValues('"a json string"')).toEqual(['"a json string"']);
  });

  it('test_every_value_read_from_or_written_to_the_store_is_reported_and_nothing_else_changes', async () => {
    const seen: string[] = [];
    const store = watchedSecrets(memoryStore(), (value) => seen.push(value));
    await store.set('conn/tokens', JSON.stringify({ access_token: 'fresh-access-token' }));
    expect(await store.get('conn/tokens')).toBe(JSON.stringify({ access_token: 'fresh-access-token' }));
    expect(await store.get('missing')).toBeUndefined();
    expect(seen).toEqual(['fresh-access-token', 'fresh-access-token']);
    expect(await store.delete('conn/tokens')).toBe(true);
  });
});
