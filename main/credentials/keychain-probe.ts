import type { DoctorCheck } from '../core/doctor.js';
import { describeError } from '../core/errors.js';

const PROBE_SERVICE = 'ward-doctor-probe';
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Asks the OS credential store for an account list under a service Ward never writes to:
 * proves the store answers without reading or writing any secret.
 */
export async function probeKeychain(): Promise<DoctorCheck> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const keytar = (await import('keytar')).default;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS);
    });
    await Promise.race([keytar.findCredentials(PROBE_SERVICE), timeout]);
    return { check: 'keychain', status: 'ok', detail: 'the OS credential store answers' };
  } catch (error) {
    return {
      check: 'keychain',
      status: 'error',
      detail: `the OS credential store is unreachable: ${describeError(error)} (Linux: a Secret Service such as gnome-keyring must run on the D-Bus session bus)`,
    };
  } finally {
    clearTimeout(timer);
  }
}
