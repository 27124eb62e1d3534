/**
 * Follows one conversation: subscribes to its journal from the last seen sequence number and
 * folds events into view state; re-reads the store's run state when a run event arrives (the
 * journal says what happened, the store says who holds the reservation now).
 */
import { useEffect, useRef, useState } from 'react';
import type { ConversationView, WardApi } from '../../../preload/contract.js';
import { errorText, unwrap } from '../api.js';
import type { JournalEventType } from '../../../preload/events.js';
import type { PushRouter } from './follow.js';
import { applyEvents, EMPTY_CONVERSATION, type ConversationState } from './timeline.js';

const RUN_EVENTS = new Set<string>(['run_started', 'run_stopping', 'run_finished', 'run_reconciled'] satisfies JournalEventType[]);

export interface FollowedConversation {
  readonly state: ConversationState;
  readonly conversation: ConversationView | null;
  readonly error: string | null;
  readonly refresh: () => void;
}

export function useConversation(api: WardApi, router: PushRouter, namespace: string, conversationId: string): FollowedConversation {
  const [state, setState] = useState<ConversationState>(EMPTY_CONVERSATION);
  const [conversation, setConversation] = useState<ConversationView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [refreshTick, setRefreshTick] = useState(0);
  const cursor = useRef(0);

  // A different conversation starts from an empty state and cursor 0.
  useEffect(() => {
    cursor.current = 0;
    setState(EMPTY_CONVERSATION);
    setConversation(null);
    setError(null);
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
    unwrap(api.journal.subscribe({ namespace, conversationId, afterSeq: cursor.current }))
      .then((subscription) => {
        subscriptionId = subscription.subscriptionId;
        if (cancelled) {
          router.forget(subscriptionId);
          void api.journal.unsubscribe({ subscriptionId });
          return;
        }
        unroute = router.route(subscription.subscriptionId, (pushed) => {
          if (pushed.kind !== 'journal') return;
          setState((current) => {
            const next = applyEvents(current, pushed.events);
            cursor.current = next.lastSeq;
            return next;
          });
          if (pushed.events.some((event) => RUN_EVENTS.has(event.type))) setRefreshTick((tick) => tick + 1);
        });
      })
      .catch((failure: unknown) => !cancelled && setError(errorText(failure)));
    return () => {
      cancelled = true;
      unroute?.();
      if (subscriptionId !== null) void api.journal.unsubscribe({ subscriptionId });
    };
  }, [api, router, namespace, conversationId]);

  return { state, conversation, error, refresh: () => setRefreshTick((tick) => tick + 1) };
}
