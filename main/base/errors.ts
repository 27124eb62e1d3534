/**
 * One error type for all of Ward, with stable string codes (panva style), grouped by the area
 * they come from. Codes are part of the contract with the CLI (exit codes, README "Exit codes")
 * and the renderer (IpcError.code); messages are for people and may change.
 */

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

/** Every code, by area, with the exit code `ward` leaves with. Adding a code forces a choice here. */
export const ERROR_CODES = {
  input: {
    usage: EXIT.usage,
    invalid_config: EXIT.usage,
    invalid_grant: EXIT.usage,
    request_conflict: EXIT.usage,
    not_found: EXIT.notFound,
  },
  namespaces: {
    invalid_namespace: EXIT.usage,
    namespace_exists: EXIT.usage,
    namespace_conflict: EXIT.usage,
    namespace_not_found: EXIT.notFound,
  },
  store: {
    store_corrupt: EXIT.store,
    store_too_new: EXIT.store,
    store_unavailable: EXIT.store,
    immutable: EXIT.failed,
    journal_invalid: EXIT.verifyFailed,
  },
  runs: {
    conversation_busy: EXIT.failed,
    run_uncertain: EXIT.uncertain,
    invalid_transition: EXIT.failed,
    run_failed: EXIT.failed,
    cli_pin_mismatch: EXIT.unavailable,
    sandbox_unavailable: EXIT.unavailable,
  },
  credentials: {
    keychain_unavailable: EXIT.unavailable,
    credential_missing: EXIT.notFound,
    /** No model key for the namespace (none stored, none in the environment), or the stored one unreadable: the desktop opens its setup card. */
    model_key_missing: EXIT.notFound,
    credential_store_insecure: EXIT.unavailable,
    lock_timeout: EXIT.unavailable,
  },
  signIn: {
    provider_unreachable: EXIT.unavailable,
    provider_timeout: EXIT.unavailable,
    signin_state_mismatch: EXIT.failed,
    signin_rejected: EXIT.failed,
    signin_timeout: EXIT.failed,
    not_signed_in: EXIT.notFound,
    unauthorized: EXIT.failed,
  },
  export: {
    /** A bundle that cannot be read as one (truncated, foreign entries, too big): not verified. */
    bundle_invalid: EXIT.verifyFailed,
    /** E3: an export would have held a secret Ward keeps for the namespace; nothing was written. */
    secret_in_export: EXIT.failed,
  },
  changes: {
    /** X2: a file a rewind would touch is not in the state the journal says: nothing was changed. */
    rewind_conflict: EXIT.failed,
  },
  policy: {
    policy_invalid: EXIT.unavailable,
    policy_refused: EXIT.usage,
  },
  general: {
    unavailable: EXIT.unavailable,
    internal: EXIT.failed,
  },
} as const satisfies Record<string, Record<string, ExitCode>>;

type Areas = typeof ERROR_CODES;
export type WardErrorCode = { [A in keyof Areas]: keyof Areas[A] }[keyof Areas] & string;

const EXIT_FOR: ReadonlyMap<string, ExitCode> = new Map(Object.values(ERROR_CODES).flatMap((area) => Object.entries(area)));

/** Every code, for contracts that name them (the renderer's IpcError.code). */
export const WARD_ERROR_CODES = [...EXIT_FOR.keys()] as readonly WardErrorCode[];

export function exitCodeFor(code: WardErrorCode): ExitCode {
  return EXIT_FOR.get(code) ?? EXIT.failed;
}

export class WardError extends Error {
  readonly code: WardErrorCode;
  /** The desktop's wording, where the message names a terminal command (the window has a place to go instead). */
  readonly desktop: string | undefined;

  constructor(code: WardErrorCode, message: string, options?: { cause?: unknown; desktop?: string }) {
    super(message, options);
    this.name = 'WardError';
    this.code = code;
    this.desktop = options?.desktop;
  }
}

export function isWardError(value: unknown, code?: WardErrorCode): value is WardError {
  return value instanceof WardError && (code === undefined || value.code === code);
}

/**
 * SQLite's word that a database file is damaged, as a store error (exit 4). Damage is looked for
 * when a database opens, but a large file is checked only once a day, so a query can meet it too.
 */
export function damagedDatabaseError(error: unknown, file = 'a database file'): WardError | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT'))) return null;
  return new WardError('store_corrupt', `${file} is corrupt (${describeError(error)}); it was left untouched`, { cause: error });
}

/** A one-line reason for any thrown value, safe to print (never a stack). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] ?? error.name;
  return String(error);
}
