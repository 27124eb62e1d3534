import { afterEach } from 'vitest';
import { openSecretStore } from '../../main/credentials/open-store.js';
import type { AuthContext } from '../../main/auth/context.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { startOidcProvider, type OidcFixture } from '../fixtures/oidc/provider.js';

const running: OidcFixture[] = [];

/** A real provider, closed after the test. */
export async function provider(options: { accessTokenTtlSeconds?: number } = {}): Promise<OidcFixture> {
  const fixture = await startOidcProvider(options);
  running.push(fixture);
  return fixture;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((fixture) => fixture.close()));
});

/** A namespace of a data folder, with its secrets in the real OS keychain. */
export function authContext(home: string, namespace = 'default', extra: Partial<AuthContext> = {}): AuthContext {
  const ns = parseNamespace(namespace);
  return { home, namespace: ns, store: openSecretStore(home, ns, { kind: 'keychain' }), requestTimeoutMs: 10_000, ...extra };
}
