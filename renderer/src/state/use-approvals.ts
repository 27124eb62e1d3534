/**
 * The namespace's pending approvals and servers' requests for input, as main pushes them, and
 * which chats wait on one. Each new approval is announced once, and once more near its end.
 */
import { useEffect, useMemo, useRef, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ConversationView, PendingApprovalView, PendingElicitationView } from '../../../common/views.js';
import { unwrap } from '../api.js';
import { secondsLeft } from '../components/ApprovalPrompt.js';
import type { PushRouter } from './follow.js';
import type { Announce } from './use-announcer.js';
import { titleOf, type Scope } from './use-conversation-list.js';
import type { Fail } from './use-window-error.js';

/** Announced again when this little time is left to answer. */
const LAST_CALL_S = 20;

export interface Approvals {
  readonly approvals: readonly PendingApprovalView[];
  readonly elicitations: readonly PendingElicitationView[];
  /** Chats with a question waiting. */
  readonly waiting: ReadonlySet<string>;
}

export function useApprovals(api: WardApi, router: PushRouter, { ready, namespace }: Scope, fail: Fail): Approvals {
  const [approvals, setApprovals] = useState<readonly PendingApprovalView[]>([]);
  const [elicitations, setElicitations] = useState<readonly PendingElicitationView[]>([]);

  useEffect(() => {
    if (!ready) return;
    let cancelled = false;
    let unroute: (() => void) | null = null;
    setApprovals([]);
    setElicitations([]);
    unwrap(api.approvals.watch({ namespace }))
      .then(({ subscriptionId }) => {
        if (cancelled) return router.forget(subscriptionId);
        unroute = router.route(subscriptionId, (pushed) => {
          if (pushed.kind !== 'approvals') return;
          setApprovals(pushed.pending);
          setElicitations(pushed.elicitations);
        });
      })
      .catch(fail);
    return () => {
      cancelled = true;
      unroute?.();
    };
  }, [api, router, ready, namespace, fail]);

  const waiting = useMemo(
    () => new Set([...approvals, ...elicitations].map((question) => question.conversationId).filter((id): id is string => id !== null)),
    [approvals, elicitations],
  );
  return { approvals, elicitations, waiting };
}

/** Says each new approval once, naming its chat, and once more when LAST_CALL_S seconds are left. */
export function useApprovalAnnouncements(approvals: readonly PendingApprovalView[], conversations: readonly ConversationView[], announce: Announce): void {
  const announced = useRef(new Map<string, 'asked' | 'last-call'>());
  useEffect(() => {
    const check = () => {
      for (const approval of approvals) {
        const said = announced.current.get(approval.id);
        const where = titleOf(conversations, approval.conversationId);
        if (said === undefined) {
          announced.current.set(approval.id, 'asked');
          announce(`Approval needed in “${where}”: agent ${approval.agent} ${approval.summary}`);
        } else if (said === 'asked' && secondsLeft(approval.expiresAt, Date.now()) <= LAST_CALL_S) {
          announced.current.set(approval.id, 'last-call');
          announce(`${LAST_CALL_S} seconds left to answer the approval in “${where}”`);
        }
      }
    };
    check();
    if (approvals.length === 0) return;
    const timer = setInterval(check, 1_000);
    return () => clearInterval(timer);
  }, [approvals, conversations, announce]);
}
