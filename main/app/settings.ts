/**
 * A namespace's model settings: which provider its runs talk to (the "default" model profile)
 * and its model key. The key is written and cleared here, never read back (U3, C3).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ProviderTestView, SettingsView } from '../../common/views.js';
import { escapeOneLine } from '../../common/display.js';
import { WardError } from '../base/errors.js';
import { deleteModelCredential, inferKind, markModelCredentialChanged, modelCredentialStatus, normalizeModelSecret, setModelCredential, VARIABLE_FOR, type ModelCredentialKind } from '../credentials/model-credential.js';
import { configuredStoreKind, openSecretStore, type OpenStoreOptions } from '../credentials/open-store.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import { assertModelAllowed, assertProviderAllowed, type AdminPolicy } from '../policy/policy.js';
import { checkBaseUrl, PROFILES_FILE, resolveModelProfile } from '../providers/model-profile.js';
import { providerHeaders } from '../providers/provider-headers.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import { storedModelCredential } from './model-credential.js';
import type { NamespaceService } from './namespaces.js';

// How the adapters name the kinds of model credential (`ward provider set-key --kind`).
export { parseKind, VARIABLE_FOR, type ModelCredentialKind } from '../credentials/model-credential.js';

const DEFAULT_PROFILE = 'default';
/** How long "Test connection" waits for the provider. */
const TEST_TIMEOUT_MS = 15_000;

export class SettingsService {
  constructor(
    private readonly namespaces: NamespaceService,
    private readonly env: NodeJS.ProcessEnv,
    private readonly policy: AdminPolicy | null,
    private readonly stores: OpenStoreOptions = {},
  ) {}

  /**
   * "Test connection": one token count (free, nothing generated) against the namespace's provider,
   * model and credential, as a run would send them. The credential never leaves main (C3).
   */
  async testProvider(store: NamespaceStore): Promise<ProviderTestView> {
    const profile = resolveModelProfile(this.namespaces.home, store.namespace, DEFAULT_PROFILE, this.env);
    const baseUrl = checkBaseUrl(profile.baseUrl, false, 'model provider');
    assertProviderAllowed(this.policy, baseUrl);
    const credential = await storedModelCredential(this.namespaces.home, this.stores)(store.namespace, this.env);
    const headers = { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...providerHeaders(credential) };
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    const host = new URL(baseUrl).host;
    let response: Response;
    try {
      response = await fetch(new URL('v1/messages/count_tokens', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`), {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: profile.model, messages: [{ role: 'user', content: 'ping' }] }),
        signal: AbortSignal.timeout(TEST_TIMEOUT_MS),
        redirect: 'error',
      });
    } catch (error) {
      // fetch says only "fetch failed"; its cause (ECONNREFUSED, ENOTFOUND, "bad port") tells a person what to look at.
      const cause: unknown = error instanceof Error ? error.cause : undefined;
      const said = typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string' ? cause.code : cause instanceof Error ? cause.message : '';
      const code = said === '' ? '' : ` (${escapeOneLine(said, 80)})`;
      const why = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${TEST_TIMEOUT_MS / 1_000} s` : `the connection failed${code}`;
      return { ok: false, status: 0, durationMs: took(), message: `Could not reach ${host}: ${why}.` };
    }
    if (response.ok) return { ok: true, status: response.status, durationMs: took(), message: `${host} answered for model ${profile.model} in ${took()} ms.` };
    const body = (await response.json().catch(() => null)) as { error?: { message?: unknown } } | null;
    const said = typeof body?.error?.message === 'string' ? `: ${escapeOneLine(body.error.message, 200)}` : '';
    const hint = response.status === 401 || response.status === 403 ? ' Check the model key.' : response.status === 404 ? ' Check the endpoint and the model name.' : '';
    return { ok: false, status: response.status, durationMs: took(), message: `${host} answered HTTP ${response.status}${said}.${hint}` };
  }

  /** Where the namespace's runs reach the model, and which model (its default profile or the environment). */
  modelProvider(ns: Namespace): SettingsView['modelProvider'] {
    const profile = resolveModelProfile(this.namespaces.home, ns, DEFAULT_PROFILE, this.env);
    return { baseUrl: profile.baseUrl, model: profile.model };
  }

  async view(store: NamespaceStore): Promise<SettingsView> {
    const keySet = (await this.keyStatus(store.namespace)).set;
    return {
      dataFolder: this.namespaces.home,
      modelProvider: this.modelProvider(store.namespace),
      keySet,
      environmentKey: !keySet && Object.values(VARIABLE_FOR).some((variable) => (this.env[variable] ?? '') !== ''),
      keyStore: configuredStoreKind(this.namespaces.home, this.stores.managed),
    };
  }

  /** Writes the namespace's "default" model profile, the file runs read (L1 and the policy checked first). */
  setModelProvider(store: NamespaceStore, baseUrl: string, model: string): void {
    const checked = checkBaseUrl(baseUrl, false, 'model provider');
    assertProviderAllowed(this.policy, checked);
    assertModelAllowed(this.policy, model);
    const file = path.join(namespaceDir(this.namespaces.home, store.namespace), PROFILES_FILE);
    let profiles: Record<string, unknown> = {};
    if (fs.existsSync(file)) {
      try {
        profiles = (JSON.parse(fs.readFileSync(file, 'utf8')) as { profiles?: Record<string, unknown> }).profiles ?? {};
      } catch (error) {
        throw new WardError('invalid_config', `${file} is not valid JSON; fix or remove it first`, { cause: error });
      }
    }
    const next = { profiles: { ...profiles, [DEFAULT_PROFILE]: { baseUrl: checked, model } } };
    const temp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temp, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(temp, file);
  }

  /** Whether the namespace has a model key, and of which kind; never the key (C3). */
  keyStatus(ns: Namespace): Promise<{ set: false } | { set: true; kind: ModelCredentialKind }> {
    return modelCredentialStatus(this.secrets(ns));
  }

  /** Stores the model key in the namespace's secret store (the OS keychain by default, C1). */
  async setKey(ns: Namespace, secret: string, kind?: ModelCredentialKind): Promise<ModelCredentialKind> {
    const normalized = normalizeModelSecret(secret);
    const chosen = kind ?? inferKind(normalized);
    try {
      await setModelCredential(this.secrets(ns), chosen, normalized);
    } catch (error) {
      // A failed write may still have changed the store: processes that keep a key read it again.
      // With no stamp yet nothing is written (a refused write leaves no file anywhere).
      markModelCredentialChanged(this.namespaces.home, ns, { onlyIfStamped: true });
      throw error;
    }
    markModelCredentialChanged(this.namespaces.home, ns);
    return chosen;
  }

  /** Deletes the model key; false when none was stored. */
  async clearKey(ns: Namespace): Promise<boolean> {
    try {
      const deleted = await deleteModelCredential(this.secrets(ns));
      markModelCredentialChanged(this.namespaces.home, ns);
      return deleted;
    } catch (error) {
      markModelCredentialChanged(this.namespaces.home, ns, { onlyIfStamped: true });
      throw error;
    }
  }

  private secrets(ns: Namespace) {
    return openSecretStore(this.namespaces.home, ns, this.stores);
  }
}
