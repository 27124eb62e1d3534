import type { WardErrorCode } from '../base/errors.js';

/** Documented in README ("Exit codes"); scripts rely on them, so change them only on purpose. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  verifyFailed: 3,
  store: 4,
  notFound: 5,
  uncertain: 6,
  unavailable: 7,
  stopped: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export function exitCodeFor(code: WardErrorCode): ExitCode {
  switch (code) {
    case 'usage':
    case 'invalid_namespace':
    case 'namespace_conflict':
    case 'namespace_exists':
    case 'invalid_config':
    case 'request_conflict':
    case 'invalid_grant':
    case 'policy_refused':
      return EXIT.usage;
    case 'not_found':
    case 'namespace_not_found':
    case 'credential_missing':
    case 'not_signed_in':
      return EXIT.notFound;
    case 'store_corrupt':
    case 'store_too_new':
    case 'store_unavailable':
      return EXIT.store;
    case 'journal_invalid':
      return EXIT.verifyFailed;
    case 'keychain_unavailable':
    case 'credential_store_insecure':
    case 'provider_unreachable':
    case 'provider_timeout':
    case 'lock_timeout':
    case 'cli_pin_mismatch':
    case 'sandbox_unavailable':
    case 'policy_invalid':
    case 'unavailable':
      return EXIT.unavailable;
    default:
      return EXIT.failed;
  }
}
