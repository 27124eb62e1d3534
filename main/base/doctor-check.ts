/**
 * What each part of Ward reports to `ward doctor`. Parts contribute probes; the app runs them.
 * `ok` is earned by a real check; what is not set up says so instead of a fake OK.
 */
export type CheckStatus = 'ok' | 'warning' | 'error' | 'not_configured';

export interface DoctorCheck {
  readonly check: string;
  readonly status: CheckStatus;
  readonly detail: string;
  readonly data?: Record<string, unknown>;
}

/** What a probe may look at: the data folder. */
export interface DoctorContext {
  readonly home: string;
}

/** A check a part of Ward contributes (keychain, pinned CLI, ...). Must bound its own waits. */
export type DoctorProbe = (context: DoctorContext) => Promise<DoctorCheck | DoctorCheck[]>;
