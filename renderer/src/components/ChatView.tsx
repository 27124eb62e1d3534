/** The chat: the journal-driven timeline, the uncertain-run banner, pending approvals, the composer. */
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { ApprovalAnswer, PendingApprovalView, WardApi } from '../../../preload/contract.js';
import { describeUsage } from '../../../preload/usage.js';
import { errorText, unwrap } from '../api.js';
import type { PushRouter } from '../state/follow.js';
import { indexAtSeq, mergeRunState, type RunStatus, type TimelineItem } from '../state/timeline.js';
import { useConversation } from '../state/use-conversation.js';
import { ApprovalPrompt } from './ApprovalPrompt.js';
import { Composer } from './Composer.js';
import { estimateRowHeight, TimelineRow } from './Timeline.js';
import { UncertainBanner, type Outcome } from './UncertainBanner.js';
import { VirtualList } from './VirtualList.js';

export interface ChatViewProps {
  readonly api: WardApi;
  readonly router: PushRouter;
  readonly namespace: string;
  readonly conversationId: string;
  readonly approvals: readonly PendingApprovalView[];
  readonly onOpenLink: (url: string) => void;
  /** Told when the run's state changes, so lists showing it can refresh. */
  readonly onRunChange?: (state: string | null) => void;
  /** An event to bring into view (a search hit). */
  readonly focusSeq?: number | null;
}

const itemKey = (item: TimelineItem) => item.key;

export function ChatView({ api, router, namespace, conversationId, approvals, onOpenLink, onRunChange, focusSeq = null }: ChatViewProps) {
  const { state, conversation, error, refresh } = useConversation(api, router, namespace, conversationId);
  // Focused once the replay has reached the event.
  const focusIndex = useMemo(() => (focusSeq === null || state.lastSeq < focusSeq ? null : indexAtSeq(state.items, focusSeq)), [focusSeq, state.items, state.lastSeq]);
  const [actionError, setActionError] = useState<string | null>(null);
  const [localRun, setLocalRun] = useState<RunStatus | null>(null);

  const storeRun: RunStatus | null = conversation?.activeRun ?? null;
  let run = mergeRunState(state.run, storeRun);
  // Our own Send/Stop shows at once, until the journal or the store has caught up with it.
  if (localRun !== null) {
    if (run === null || run.id !== localRun.id) run = localRun;
    else if (localRun.state === 'stopping' && (run.state === 'running' || run.state === 'admitted')) run = localRun;
  }

  const runState = run?.state ?? null;
  useEffect(() => onRunChange?.(runState), [runState, onRunChange]);

  const renderItem = useCallback((item: TimelineItem) => <TimelineRow item={item} onOpenLink={onOpenLink} />, [onOpenLink]);

  const send = async (prompt: string): Promise<boolean> => {
    setActionError(null);
    try {
      const started = await unwrap(api.runs.send({ namespace, conversationId, requestId: crypto.randomUUID(), prompt }));
      setLocalRun({ id: started.runId, state: 'running', reason: null });
      return true;
    } catch (failure) {
      setActionError(errorText(failure));
      return false;
    }
  };
  const stop = () => {
    if (run === null) return;
    const runId = run.id;
    setLocalRun({ id: runId, state: 'stopping', reason: null });
    setActionError(null);
    unwrap(api.runs.stop({ namespace, runId }))
      .then(() => refresh())
      .catch((failure: unknown) => setActionError(errorText(failure)));
  };
  const reconcile = (outcome: Outcome, note: string) => {
    if (run === null) return;
    unwrap(api.runs.reconcile({ namespace, runId: run.id, outcome, note }))
      .then(() => {
        setLocalRun(null);
        refresh();
      })
      .catch((failure: unknown) => setActionError(errorText(failure)));
  };
  const answer = (approvalId: string, value: ApprovalAnswer) => {
    unwrap(api.approvals.answer({ namespace, approvalId, answer: value })).catch((failure: unknown) => setActionError(errorText(failure)));
  };

  const mine = approvals.filter((approval) => approval.conversationId === conversationId);
  return (
    <section className="chat" aria-label="Chat">
      <header className="chat-header">
        <h2>{conversation?.title ?? 'Loading…'}</h2>
        {conversation !== null && (
          <span className="chat-agent">
            {conversation.agentName} v{conversation.agentVersion}
          </span>
        )}
        {state.usageTotal.turns > 0 && (
          <span className="chat-usage" data-testid="chat-usage">
            Total: {describeUsage(state.usageTotal.tokens, state.usageTotal.costUsd)}
          </span>
        )}
      </header>
      {error !== null && (
        <div className="banner banner-error" role="alert">
          {error}
        </div>
      )}
      {run?.state === 'uncertain' && <UncertainBanner run={run} onReconcile={reconcile} />}
      {state.items.length === 0 ? (
        <div className={conversation?.lastSeq === 0 ? 'chat-empty' : 'chat-loading'}>{conversation?.lastSeq === 0 ? 'No messages yet.' : 'Loading…'}</div>
      ) : (
        <VirtualList items={state.items} getKey={itemKey} estimateHeight={estimateRowHeight} renderItem={renderItem} label="Conversation" focusIndex={focusIndex} />
      )}
      {mine.map((approval) => (
        <ApprovalPrompt key={approval.id} approval={approval} onAnswer={(value) => answer(approval.id, value)} />
      ))}
      {actionError !== null && (
        <div className="banner banner-error" role="alert">
          {actionError}
        </div>
      )}
      <Composer run={run} onSend={send} onStop={stop} />
    </section>
  );
}
