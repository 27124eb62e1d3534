/**
 * Folds parsed journal events into what the chat shows, one reducer per event type
 * (event-reducers.ts). Pure and incremental: the view state is a function of the events up to
 * `lastSeq`, so a reload replays from 0 and a resubscribe continues from `lastSeq` (J1).
 */
import type { JournalEventView } from '../../../common/views.js';
import { addTurn, describeUsage, foldUsage } from '../../../common/usage.js';
import { reduce, type Fold } from './event-reducers.js';
import type { ConversationState } from './timeline.js';

/** Applies a batch of events in order; events at or before `lastSeq` are ignored (idempotent replay). */
export function applyEvents(state: ConversationState, events: readonly JournalEventView[]): ConversationState {
  const fresh = events.filter((event) => event.seq > state.lastSeq);
  if (fresh.length === 0) return state;
  const fold: Fold = { items: [...state.items], run: state.run };
  let { usage, usageTotal } = state;
  for (const { seq, runId, createdAt, ...event } of fresh) {
    const [nextUsage, turn] = foldUsage(usage, runId, createdAt, event);
    usage = nextUsage;
    reduce(fold, event, { key: `e${seq}`, runId, at: createdAt });
    // A turn that reported what it used gets a line under it.
    if (turn !== null && (turn.tokensFrom !== null || turn.costUsd !== null)) {
      usageTotal = addTurn(usageTotal, turn);
      fold.items.push({ kind: 'usage', key: `u${seq}`, runId: turn.runId, text: `Turn: ${describeUsage(turn.tokens, turn.costUsd)}` });
    }
  }
  return { items: fold.items, lastSeq: fresh[fresh.length - 1]!.seq, run: fold.run, usage, usageTotal };
}
