/**
 * How a turn writes to the journal: every event carries the run id, every string that could hold
 * a secret Ward handed out for this turn is redacted first (C3), and the events of one stdout
 * chunk are committed in one transaction before any subscriber hears of them (J1).
 */
import { redactSecrets } from '../../base/secret-redaction.js';
import { journalEvent, type JournalEventType, type PayloadOf } from '../../../common/events.js';
import type { EventInput } from '../../store/journal.js';
import type { NamespaceStore } from '../../store/namespace-store.js';

export class TurnJournal {
  private readonly secrets: string[] = [];
  /** While one stdout chunk is handled, events collect here and are committed together. */
  private pending: EventInput[] | null = null;

  constructor(
    private readonly store: NamespaceStore,
    private readonly conversationId: string,
    private readonly runId: string,
  ) {}

  /** A value that must never be journaled (the model credential, the run's capability). */
  addSecret(secret: string): void {
    if (!this.secrets.includes(secret)) this.secrets.push(secret);
  }

  secretList(): readonly string[] {
    return this.secrets;
  }

  redact(text: string): string {
    return redactSecrets(text, this.secrets);
  }

  /** Typed by common/events.ts at compile time; not parsed here (the append path stays fast). */
  emit<T extends JournalEventType>(type: T, payload: PayloadOf<T>): void {
    const event = journalEvent(type, payload);
    if (this.pending !== null) this.pending.push(event);
    else this.commit([event]);
  }

  /** Runs `handle` and commits what it emitted in one transaction; nothing is committed if it throws. */
  batch(handle: () => void): void {
    this.pending = [];
    try {
      handle();
      const events = this.pending;
      this.pending = null;
      this.commit(events);
    } finally {
      this.pending = null;
    }
  }

  private commit(events: readonly EventInput[]): void {
    this.store.journal.appendMany(
      this.conversationId,
      events.map((event) => ({ ...event, runId: this.runId })),
    );
  }
}
