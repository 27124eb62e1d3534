/**
 * The audit sink's background sender (issue 28): a `ward` command's turns do not send from their
 * own process (on two cores, every batch formatted and sent there is the turn's time); they hand
 * the journal to one `ward audit send --background` per data folder, started at the lowest CPU
 * priority. It sends what every namespace has waiting, keeps sending while events arrive, and exits
 * once nothing has waited for a while; the next turn starts it again. The desktop, a process that
 * stays, sends from its own loop (startAudit).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { AuditDelivery } from '../audit/delivery.js';
import { runningSender, SenderLock, type SenderLockInfo } from '../audit/sender-lock.js';
import type { AdminPolicy } from '../policy/policy.js';
import { auditSink } from './audit.js';

/** A turn longer than this does not wait for its end: the sender starts while it runs. */
const HAND_OFF_DURING_TURN_MS = 10_000;

/** Starts `ward audit send --background` detached, at the lowest priority (the adapter knows how). */
export type StartSender = () => void;

/** A `ward` process's side: starts the sender when its turns ran (or ran long), unless one runs. */
export class AuditHandOff {
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly home: string,
    private readonly policy: () => AdminPolicy | null,
    private readonly startSender: StartSender,
  ) {
    this.timer = setTimeout(() => this.handOff(), HAND_OFF_DURING_TURN_MS);
    this.timer.unref();
  }

  /** At the process's end: what its turns journaled goes to the sender. */
  close(): void {
    clearTimeout(this.timer);
    this.handOff();
  }

  private handOff(): void {
    let policy: AdminPolicy | null;
    try {
      policy = this.policy();
    } catch {
      // A policy that does not parse refused the run already, with its error: nothing to send to.
      return;
    }
    if (auditSink(policy) === null || runningSender(this.home) !== null) return;
    this.startSender();
  }
}

export interface SenderBounds {
  /** Exits once every outbox has been empty this long (default 30 s). */
  readonly idleExitMs?: number;
  /** Exits after this long without taking a single event, a dead sink (default 15 min): the backlog waits for the next sender. */
  readonly stalledExitMs?: number;
  /** How often it looks (default 1 s). */
  readonly checkMs?: number;
  /** Exits at the first failure instead of retrying with backoff (a person waiting at `ward audit send`). */
  readonly exitOnFailure?: boolean;
}

export type SenderOutcome = { readonly kind: 'done'; readonly sent: number; readonly lastProblem: string | null } | { readonly kind: 'already_running'; readonly sender: SenderLockInfo } | { readonly kind: 'no_sink' };

/**
 * The sender's side: holds the data folder's sender lock and runs the delivery loop until it is
 * idle, stalled, or `signal` aborts; then stops it (a batch in flight is sent again next time).
 */
export async function runBackgroundSender(home: string, startAudit: () => AuditDelivery | null, bounds: SenderBounds = {}, signal?: AbortSignal): Promise<SenderOutcome> {
  const lock = SenderLock.acquire(home);
  if (lock === null) return { kind: 'already_running', sender: runningSender(home) ?? { pid: 0, since: new Date().toISOString() } };
  try {
    const delivery = startAudit();
    if (delivery === null) return { kind: 'no_sink' };
    const { idleExitMs = 30_000, stalledExitMs = 15 * 60_000, checkMs = 1_000, exitOnFailure = false } = bounds;
    let lastSent = 0;
    let progressAt = Date.now();
    while (signal?.aborted !== true) {
      await sleep(checkMs, undefined, { signal }).catch(() => undefined);
      const status = delivery.status();
      const now = Date.now();
      if (status.sent > lastSent) [lastSent, progressAt] = [status.sent, now];
      if (status.idleSince !== null && now - status.idleSince >= idleExitMs) break;
      if (status.idleSince === null && now - progressAt >= stalledExitMs) break;
      if (exitOnFailure && status.failures > 0) break;
    }
    await delivery.stop();
    const { sent, lastProblem } = delivery.status();
    return { kind: 'done', sent, lastProblem };
  } finally {
    lock.release();
  }
}
