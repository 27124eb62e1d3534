/**
 * Follows one conversation: subscribes to its journal and folds events into view state; re-reads
 * the store's run state when a run event arrives (the journal says what happened, the store says
 * who holds the reservation now).
 *
 * A chat opens at its latest message: main sends the newest TAIL events first, which are folded
 * and shown at once, then the history before them. Once the history is all in, the whole journal
 * is folded again from the start (the fold is a function of every event, J1), and from then on
 * events are applied as they come.
 */
import { startTransition, useEffect, useRef, useState, type Dispatch, type SetStateAction } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ConversationView, JournalEventView } from '../../../common/views.js';
import { errorText, unwrap } from '../api.js';
import type { JournalEventType } from '../../../common/events.js';
import type { PushRouter } from './follow.js';
import { applyEvents } from './apply-events.js';
import { EMPTY_CONVERSATION, type ConversationState } from './timeline.js';

const RUN_EVENTS = new Set<string>(['run_started', 'run_stopping', 'run_finished', 'run_reconciled'] satisfies JournalEventType[]);
/** Enough for a few screens: what a chat needs to paint at its latest message. */
export const TAIL_EVENTS = 200;

export interface FollowedConversation {
  readonly state: ConversationState;
  readonly conversation: ConversationView | null;
  readonly error: string | null;
  /** False while the history behind the latest messages is still arriving. */
  readonly complete: boolean;
  readonly refresh: () => void;
}

/** Events held until the history behind the tail is complete. */
interface Pending {
  readonly tailFrom: number;
  readonly history: JournalEventView[];
  readonly recent: JournalEventView[];
}

export function useConversation(api: WardApi, router: PushRouter, namespace: string, conversationId: string): FollowedConversation {
  const [state, setState] = useState<ConversationState>(EMPTY_CONVERSATION);
  const [conversation, setConversation] = useState<ConversationView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [complete, setComplete] = useState(false);
  const [refreshTick, setRefreshTick] = useState(0);
  const cursor = useRef(0);

  // A different conversation starts from an empty state and cursor 0.
  useEffect(() => {
    cursor.current = 0;
    setState(EMPTY_CONVERSATION);
    setConversation(null);
    setError(null);
    setComplete(false);
  }, [namespace, conversationId]);

  useEffect(() => {
    let cancelled = false;
    unwrap(api.conversations.get({ namespace, conversationId }))
      .then((view) => !cancelled && setConversation(view))
      .catch((failure: unknown) => !cancelled && setError(errorText(failure)));
    return () => {
      cancelled = true;
    };
  }, [api, namespace, conversationId, refreshTick]);

  useEffect(() => {
    let cancelled = false;
    let unroute: (() => void) | null = null;
    let subscriptionId: string | null = null;
    const afterSeq = cursor.current;
    unwrap(api.journal.subscribe({ namespace, conversationId, afterSeq, ...(afterSeq === 0 ? { tail: TAIL_EVENTS } : {}) }))
      .then((subscription) => {
        subscriptionId = subscription.subscriptionId;
        if (cancelled) {
          router.forget(subscriptionId);
          void api.journal.unsubscribe({ subscriptionId });
          return;
        }
        const pending: Pending | null = subscription.tailFrom !== null && subscription.tailFrom > afterSeq ? { tailFrom: subscription.tailFrom, history: [], recent: [] } : null;
        if (pending === null) setComplete(true);
        const fold = journalFolder(pending, cursor, setState, setComplete);
        unroute = router.route(subscription.subscriptionId, (pushed) => {
          if (pushed.kind !== 'journal') return;
          const events = pushed.events;
          fold(events);
          if (events.some((event) => RUN_EVENTS.has(event.type))) setRefreshTick((tick) => tick + 1);
        });
      })
      .catch((failure: unknown) => !cancelled && setError(errorText(failure)));
    return () => {
      cancelled = true;
      unroute?.();
      if (subscriptionId !== null) void api.journal.unsubscribe({ subscriptionId });
    };
  }, [api, router, namespace, conversationId]);

  return { state, conversation, error, complete, refresh: () => setRefreshTick((tick) => tick + 1) };
}

/**
 * Folds pushed journal events into the view state as they come, or, while the history behind the
 * tail is arriving (`pending`), holds them and shows only the newest until the history is in.
 */
function journalFolder(
  pending: Pending | null,
  cursor: { current: number },
  setState: Dispatch<SetStateAction<ConversationState>>,
  setComplete: (complete: boolean) => void,
): (events: readonly JournalEventView[]) => void {
  let waiting = pending;
  return (events) => {
    if (waiting === null) {
      // A transition: React renders in slices and yields to input, so a long answer streaming in never holds the page.
      startTransition(() =>
        setState((current) => {
          const next = applyEvents(current, events);
          cursor.current = next.lastSeq;
          return next;
        }),
      );
      return;
    }
    const held = waiting;
    const recent = events.filter((event) => event.seq > held.tailFrom);
    held.history.push(...events.filter((event) => event.seq <= held.tailFrom));
    held.recent.push(...recent);
    if (held.history.length > 0 && held.history[held.history.length - 1]!.seq >= held.tailFrom) {
      // The history is in: fold everything once, in order, and go on incrementally.
      waiting = null;
      const whole = applyEvents(applyEvents(EMPTY_CONVERSATION, held.history), held.recent);
      cursor.current = whole.lastSeq;
      setState(whole);
      setComplete(true);
    } else if (recent.length > 0) {
      // Until then the newest events are shown on their own (the tail, then live ones).
      setState((current) => {
        const next = applyEvents(current.lastSeq > held.tailFrom ? current : { ...EMPTY_CONVERSATION, lastSeq: held.tailFrom }, recent);
        cursor.current = next.lastSeq;
        return next;
      });
    }
  };
}
