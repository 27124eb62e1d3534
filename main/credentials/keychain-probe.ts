import type { DoctorCheck } from '../base/doctor-check.js';
import { describeError } from '../base/errors.js';
import path from 'node:path';
import { SETTINGS_FILE } from '../base/settings-file.js';
import { keychainFix } from './keychain-store.js';
import { configuredStoreKind, type ManagedStore } from './open-store.js';

const PROBE_SERVICE = 'ward-doctor-probe';
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Checks the credential store this data folder is configured for. For the OS keychain it asks
 * for an account list under a service Ward never writes to: proves the store answers without
 * reading or writing any secret. An opt-in file store or DPAPI is reported as such.
 */
export async function probeKeychain(core?: { readonly home: string }, managed?: ManagedStore): Promise<DoctorCheck> {
  if (core !== undefined) {
    try {
      const kind = configuredStoreKind(core.home, managed);
      if (kind === 'file') return { check: 'keychain', status: 'warning', detail: `${managed?.forced === 'file' ? managed.by : 'settings.json'} selects the opt-in file store (0600 files, plaintext on disk); the OS keychain is not used`, data: { store: kind } };
      if (kind === 'dpapi') return { check: 'keychain', status: process.platform === 'win32' ? 'ok' : 'error', detail: 'settings.json selects Windows DPAPI (native-helpers/windows/ward-dpapi.ps1)', data: { store: kind } };
    } catch (error) {
      return { check: 'keychain', status: 'error', detail: describeError(error) };
    }
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    const keytar = (await import('keytar')).default;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    });
    await Promise.race([keytar.findCredentials(PROBE_SERVICE), timeout]);
    return { check: 'keychain', status: 'ok', detail: 'the OS credential store answers', data: { store: 'keychain' } };
  } catch (error) {
    return {
      check: 'keychain',
      status: 'error',
      detail: `the OS credential store is unreachable: ${describeError(error)}. ${keychainFix(core === undefined ? undefined : path.join(core.home, SETTINGS_FILE))}`,
    };
  } finally {
    clearTimeout(timer);
  }
}
