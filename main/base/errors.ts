/**
 * One error type for the whole core, with stable string codes (panva style).
 * Codes are part of the contract with the CLI (exit codes) and the renderer (typed results);
 * messages are for people and may change.
 */
export type WardErrorCode =
  | 'usage'
  | 'invalid_namespace'
  | 'namespace_exists'
  | 'namespace_not_found'
  | 'namespace_conflict'
  | 'not_found'
  | 'store_corrupt'
  | 'store_too_new'
  | 'store_unavailable'
  | 'immutable'
  | 'conversation_busy'
  | 'request_conflict'
  | 'invalid_transition'
  | 'journal_invalid'
  | 'invalid_config'
  | 'keychain_unavailable'
  | 'credential_missing'
  | 'credential_store_insecure'
  | 'lock_timeout'
  | 'provider_unreachable'
  | 'provider_timeout'
  | 'signin_state_mismatch'
  | 'signin_rejected'
  | 'signin_timeout'
  | 'not_signed_in'
  | 'unauthorized'
  | 'cli_pin_mismatch'
  | 'sandbox_unavailable'
  | 'run_failed'
  | 'unavailable'
  | 'invalid_grant'
  | 'policy_invalid'
  | 'policy_refused'
  | 'internal';

export class WardError extends Error {
  readonly code: WardErrorCode;

  constructor(code: WardErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'WardError';
    this.code = code;
  }
}

export function isWardError(value: unknown, code?: WardErrorCode): value is WardError {
  return value instanceof WardError && (code === undefined || value.code === code);
}

/** A one-line reason for any thrown value, safe to print (never a stack). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}
