/**
 * A namespace's model settings: which provider its runs talk to (the "default" model profile)
 * and its model key. The key is written and cleared here, never read back (U3, C3).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { SettingsView } from '../../preload/contract.js';
import { WardError } from '../base/errors.js';
import { deleteModelCredential, inferKind, modelCredentialStatus, normalizeModelSecret, setModelCredential, type ModelCredentialKind } from '../credentials/model-credential.js';
import { configuredStoreKind, openSecretStore, type OpenStoreOptions } from '../credentials/open-store.js';
import { namespaceDir, type Namespace } from '../namespaces/namespace.js';
import { assertModelAllowed, assertProviderAllowed, type AdminPolicy } from '../policy/policy.js';
import { checkBaseUrl, PROFILES_FILE, resolveModelProfile } from '../providers/model-profile.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { NamespaceService } from './namespaces.js';

const DEFAULT_PROFILE = 'default';

export class SettingsService {
  constructor(
    private readonly namespaces: NamespaceService,
    private readonly env: NodeJS.ProcessEnv,
    private readonly policy: AdminPolicy | null,
    private readonly stores: OpenStoreOptions = {},
  ) {}

  async view(store: NamespaceStore): Promise<SettingsView> {
    const profile = resolveModelProfile(this.namespaces.home, store.namespace, DEFAULT_PROFILE, this.env);
    return {
      dataFolder: this.namespaces.home,
      modelProvider: { baseUrl: profile.baseUrl, model: profile.model },
      keySet: (await this.keyStatus(store.namespace)).set,
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
    await setModelCredential(this.secrets(ns), chosen, normalized);
    return chosen;
  }

  /** Deletes the model key; false when none was stored. */
  clearKey(ns: Namespace): Promise<boolean> {
    return deleteModelCredential(this.secrets(ns));
  }

  private secrets(ns: Namespace) {
    return openSecretStore(this.namespaces.home, ns, this.stores);
  }
}
