import { WardError, describeError } from '../base/errors.js';
import { KEYCHAIN_SERVICE, type SecretBackend } from './secret-store.js';

/** What Ward uses of keytar; a seam so a test can stand in a store that hangs. */
export interface KeytarApi {
  getPassword(service: string, account: string): Promise<string | null>;
  setPassword(service: string, account: string, password: string): Promise<void>;
  deletePassword(service: string, account: string): Promise<boolean>;
  findCredentials(service: string): Promise<Array<{ account: string; password: string }>>;
}

export const KEYCHAIN_TIMEOUT_MS = 10_000;

export const KEYCHAIN_FIX =
  'Linux: run a Secret Service (gnome-keyring or KWallet) on the D-Bus session bus and unlock it; macOS: unlock the login keychain; Windows: Credential Manager must be available. ' +
  'Ward never falls back to plaintext; an IT admin may opt in to the file store with {"credentialStore":"file"} in settings.json';

async function loadKeytar(): Promise<KeytarApi> {
  try {
    return (await import('keytar')).default;
  } catch (error) {
    throw new WardError('keychain_unavailable', `the OS credential store library (keytar) did not load: ${describeError(error)}. ${KEYCHAIN_FIX}`, { cause: error });
  }
}

/**
 * The OS credential store through keytar (macOS Keychain, libsecret, Windows Credential
 * Manager). Every call is bounded; any failure is `keychain_unavailable` with the fix, never a
 * fallback (C1).
 */
export class KeychainBackend implements SecretBackend {
  readonly kind = 'keychain';
  private keytar: Promise<KeytarApi> | undefined;

  constructor(private readonly options: { timeoutMs?: number; keytar?: KeytarApi; service?: string } = {}) {}

  private api(): Promise<KeytarApi> {
    this.keytar ??= this.options.keytar !== undefined ? Promise.resolve(this.options.keytar) : loadKeytar();
    return this.keytar;
  }

  private async call<T>(what: string, operation: (api: KeytarApi, service: string) => Promise<T>): Promise<T> {
    const api = await this.api();
    const timeoutMs = this.options.timeoutMs ?? KEYCHAIN_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms (locked or not running?)`)), timeoutMs);
    });
    try {
      return await Promise.race([operation(api, this.options.service ?? KEYCHAIN_SERVICE), timeout]);
    } catch (error) {
      throw new WardError('keychain_unavailable', `could not ${what} the OS credential store: ${describeError(error)}. ${KEYCHAIN_FIX}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  async get(entry: string): Promise<string | undefined> {
    return (await this.call('read from', (api, service) => api.getPassword(service, entry))) ?? undefined;
  }

  set(entry: string, secret: string): Promise<void> {
    return this.call('write to', (api, service) => api.setPassword(service, entry, secret));
  }

  delete(entry: string): Promise<boolean> {
    return this.call('delete from', (api, service) => api.deletePassword(service, entry));
  }

  async list(prefix: string): Promise<Array<{ entry: string; secret: string }>> {
    const found = await this.call('list', (api, service) => api.findCredentials(service));
    // Only this prefix's entries are kept: the service holds every namespace's.
    return found.filter(({ account }) => account.startsWith(prefix)).map(({ account, password }) => ({ entry: account, secret: password }));
  }
}
