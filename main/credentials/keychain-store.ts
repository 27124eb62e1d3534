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

const NO_FALLBACK = 'Ward never falls back to plaintext by itself.';

/**
 * How to get the OS credential store working, for this OS only: on Linux both ways out, a Secret
 * Service for this shell (what a desktop session runs already) or the opt-in file store in the
 * data folder's settings.json. Ward never falls back to plaintext by itself.
 */
export function keychainFix(settingsFile = '<WARD_HOME>/settings.json', platform: NodeJS.Platform = process.platform): string {
  const fileStore = `opt in to the file store (0600 files, plaintext on disk) with {"credentialStore": "file"} in ${settingsFile}`;
  switch (platform) {
    case 'darwin':
      return `Unlock the login keychain, or ${fileStore}. ${NO_FALLBACK}`;
    case 'win32':
      return `Windows Credential Manager must be available for your account. ${NO_FALLBACK}`;
    default:
      return (
        'Start a Secret Service for this shell: dbus-run-session -- sh -c \'printf %s "$KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null && exec "${SHELL:-sh}"\' ' +
        `(Debian: apt-get install dbus gnome-keyring; a desktop session runs one already), or ${fileStore}. ${NO_FALLBACK}`
      );
  }
}

async function loadKeytar(fix: string): Promise<KeytarApi> {
  try {
    return (await import('keytar')).default;
  } catch (error) {
    throw new WardError('keychain_unavailable', `the OS credential store library (keytar) did not load: ${describeError(error)}. ${fix}`, { cause: error });
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

  /** How to get the store working, named in every failure. */
  private readonly fix: string;

  /** @param options.settingsFile the data folder's settings.json, where the file store is chosen. */
  constructor(private readonly options: { timeoutMs?: number; keytar?: KeytarApi; service?: string; settingsFile?: string } = {}) {
    this.fix = keychainFix(options.settingsFile);
  }

  private api(): Promise<KeytarApi> {
    this.keytar ??= this.options.keytar !== undefined ? Promise.resolve(this.options.keytar) : loadKeytar(this.fix);
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
      throw new WardError('keychain_unavailable', `could not ${what} the OS credential store: ${describeError(error)}. ${this.fix}`, { cause: error });
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
