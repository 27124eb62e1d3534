/**
 * Journal events enter the renderer here, from main's pushes (follow.ts) and a review's pages,
 * and are parsed once with their schema (common/events.ts): what crosses the bridge is data, and
 * an event that does not parse is passed on as unreadable, never guessed at. Everything past this
 * point takes the typed events as they are.
 */
import type { JournalEventView } from '../../../common/views.js';
import { readJournalEvent } from '../../../common/events.js';

/** An event as it crossed the bridge: its place in the journal, and a type and payload not yet trusted. */
export interface ArrivingEvent {
  readonly seq: number;
  readonly runId: string | null;
  readonly createdAt: string;
  readonly type: string;
  readonly payload: unknown;
}

export function readIncomingEvents(events: readonly ArrivingEvent[]): JournalEventView[] {
  return events.map(({ seq, runId, createdAt, type, payload }) => ({ seq, runId, createdAt, ...readJournalEvent(type, payload) }));
}
