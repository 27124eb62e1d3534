/**
 * The chat: its header (title, agent, project folder, what it cost), the uncertain-run banner, the
 * journal-driven timeline with each approval on the tool call that asks, and the composer.
 * Escape stops the run from anywhere in the window (a dialog or an approval with focus takes its
 * own Escape first).
 */
import { Folder, Gauge, UserRound } from 'lucide-react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { AgentView, ApprovalAnswer, ElicitationAction, ElicitationFieldValue, PendingApprovalView, PendingElicitationView } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { ElicitationPrompt } from './ElicitationPrompt.js';
import { errorText, unwrap } from '../api.js';
import type { PushRouter } from '../state/follow.js';
import { indexAtSeq, mergeRunState, shownToolName, timelineRows, type RunStatus, type TimelineItem, type TimelineRowModel, type ToolItem } from '../state/timeline.js';
import { describeUsage } from '../../../common/usage.js';
import { useConversation } from '../state/use-conversation.js';
import { ApprovalPrompt } from './ApprovalPrompt.js';
import { Composer } from './Composer.js';
import { ErrorBanner } from './PageNotice.js';
import { FolderGrants } from './FolderGrants.js';
import { estimateRowHeight, TimelineRow, type RowContext, type ToolPhase } from './Timeline.js';
import { UncertainBanner, type Outcome } from './UncertainBanner.js';
import { VirtualList } from './VirtualList.js';

export interface ChatViewProps {
  readonly api: WardApi;
  readonly router: PushRouter;
  readonly namespace: string;
  readonly conversationId: string;
  readonly approvals: readonly PendingApprovalView[];
  /** The namespace's agents, for the grants a new chat works with. */
  readonly agents?: readonly AgentView[];
  /** Servers' requests for input; this chat shows its own. */
  readonly elicitations?: readonly PendingElicitationView[];
  readonly onAnswerElicitation?: (elicitationId: string, action: ElicitationAction, content?: Record<string, ElicitationFieldValue>) => Promise<unknown>;
  readonly onOpenLink: (url: string) => void;
  /** Told when the run's state changes, so lists showing it can refresh. */
  readonly onRunChange?: (state: string | null) => void;
  /** Told the chat's title once known (the window title names the chat). */
  readonly onTitle?: (title: string) => void;
  /** Says something in the window's status region ("Answer finished"). */
  readonly announce?: (text: string) => void;
  /** An event to bring into view (a search hit). */
  readonly focusSeq?: number | null;
}

const rowKey = (row: TimelineRowModel) => row.key;

/** Assigns each of this chat's approvals to the newest open call of its run and tool; the rest are unplaced. */
function placeApprovals(items: readonly TimelineItem[], approvals: readonly PendingApprovalView[]): { byTool: Map<string, PendingApprovalView>; unplaced: PendingApprovalView[] } {
  const byTool = new Map<string, PendingApprovalView>();
  const unplaced: PendingApprovalView[] = [];
  for (const approval of approvals) {
    const tool = shownToolName(approval.tool);
    let placed = false;
    for (let index = items.length - 1; index >= 0 && index >= items.length - 200; index--) {
      const item = items[index]!;
      if (item.kind === 'tool' && item.output === null && item.runId === approval.runId && item.tool === tool && !byTool.has(item.key)) {
        byTool.set(item.key, approval);
        placed = true;
        break;
      }
    }
    if (!placed) unplaced.push(approval);
  }
  return { byTool, unplaced };
}

export function ChatView({ api, router, namespace, conversationId, approvals, agents = [], elicitations = [], onAnswerElicitation, onOpenLink, onRunChange, onTitle, announce, focusSeq = null }: ChatViewProps) {
  const { state, conversation, error, refresh } = useConversation(api, router, namespace, conversationId);
  // Focused once the replay has reached the event.
  const focusIndex = useMemo(() => (focusSeq === null || state.lastSeq < focusSeq ? null : indexAtSeq(state.items, focusSeq)), [focusSeq, state.items, state.lastSeq]);
  const [actionError, setActionError] = useState<string | null>(null);
  const [localRun, setLocalRun] = useState<RunStatus | null>(null);
  const [openGroups, setOpenGroups] = useState<ReadonlySet<string>>(new Set());

  const storeRun: RunStatus | null = conversation?.activeRun ?? null;
  let run = mergeRunState(state.run, storeRun);
  // Our own Send/Stop shows at once, until the journal or the store has caught up with it.
  if (localRun !== null) {
    if (run === null || run.id !== localRun.id) run = localRun;
    else if (localRun.state === 'stopping' && (run.state === 'running' || run.state === 'admitted')) run = localRun;
  }

  const runState = run?.state ?? null;
  useEffect(() => onRunChange?.(runState), [runState, onRunChange]);
  const title = conversation === null ? null : escapeLineForWindow(conversation.title, 200);
  useEffect(() => {
    if (title !== null) onTitle?.(title);
  }, [title, onTitle]);
  const previousState = useRef(runState);
  useEffect(() => {
    const before = previousState.current;
    previousState.current = runState;
    if (before !== 'running' && before !== 'admitted') return;
    if (runState === 'succeeded') announce?.('Answer finished');
    else if (runState === 'failed') announce?.('The run failed');
    else if (runState === 'stopped') announce?.('Stopped');
  }, [runState, announce]);

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
  // While the person writes, main starts the chat's CLI, so the message is answered by one already running.
  // Only a head start: whatever it meets (busy, off, a refusal), the send reports for itself.
  const prepare = useCallback(() => void api.runs.prepare({ namespace, conversationId }).catch(() => undefined), [api, namespace, conversationId]);
  const active = runState === 'running' || runState === 'admitted';
  const stop = useCallback(() => {
    if (run === null) return;
    const runId = run.id;
    setLocalRun({ id: runId, state: 'stopping', reason: null });
    setActionError(null);
    unwrap(api.runs.stop({ namespace, runId }))
      .then(() => refresh())
      .catch((failure: unknown) => setActionError(errorText(failure)));
  }, [api, namespace, run, refresh]);
  useEffect(() => {
    if (!active) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape' || event.defaultPrevented || document.querySelector('dialog[open]') !== null) return;
      if (event.target instanceof HTMLInputElement && event.target.type === 'search') return;
      event.preventDefault();
      stop();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [active, stop]);
  const reconcile = (outcome: Outcome, note: string) => {
    if (run === null) return;
    unwrap(api.runs.reconcile({ namespace, runId: run.id, outcome, note }))
      .then(() => {
        setLocalRun(null);
        refresh();
      })
      .catch((failure: unknown) => setActionError(errorText(failure)));
  };
  const answer = useCallback(
    (approvalId: string, value: ApprovalAnswer) => {
      unwrap(api.approvals.answer({ namespace, approvalId, answer: value })).catch((failure: unknown) => setActionError(errorText(failure)));
    },
    [api, namespace],
  );

  const mine = useMemo(() => approvals.filter((approval) => approval.conversationId === conversationId), [approvals, conversationId]);
  const { byTool, unplaced } = useMemo(() => placeApprovals(state.items, mine), [state.items, mine]);
  // A server's request for input waits below the timeline, with the questions not placed on a call.
  const myElicitations = useMemo(() => (onAnswerElicitation === undefined ? [] : elicitations.filter((elicitation) => elicitation.conversationId === conversationId)), [elicitations, onAnswerElicitation, conversationId]);
  const rows = useMemo(() => timelineRows(state.items, openGroups, (tool) => tool.status === 'running' || byTool.has(tool.key)), [state.items, openGroups, byTool]);
  // The row showing the search hit: its item's, or the group holding it.
  const focusRow = useMemo(() => {
    if (focusIndex === null) return null;
    const key = state.items[focusIndex]!.key;
    const at = rows.findIndex((row) => (row.kind === 'item' ? row.key === key : row.tools.some((tool) => tool.key === key)));
    return at < 0 ? null : at;
  }, [focusIndex, rows, state.items]);

  const lastPrompt = useMemo(() => {
    for (let index = state.items.length - 1; index >= 0; index--) {
      const item = state.items[index]!;
      if (item.kind === 'user') return { item, answer: state.items.slice(index + 1).findLast((later) => later.kind === 'assistant') };
    }
    return null;
  }, [state.items]);
  const idle = run === null || run.state === 'succeeded' || run.state === 'failed' || run.state === 'stopped';
  const retryPrompt = lastPrompt?.item.kind === 'user' ? lastPrompt.item.prompt : null;
  const retryKey = idle && lastPrompt !== null ? (lastPrompt.answer?.key ?? lastPrompt.item.key) : null;
  const sendRef = useRef(send);
  sendRef.current = send;
  const context = useMemo<RowContext>(
    () => ({
      agent: conversation?.agentName ?? 'Agent',
      onOpenLink,
      retry: retryKey === null || retryPrompt === null ? null : { key: retryKey, run: () => void sendRef.current(retryPrompt) },
      toolPhase: (tool: ToolItem): ToolPhase => {
        if (byTool.has(tool.key)) return 'waiting';
        if (tool.status !== 'running') return tool.status;
        // A call of a run that is over (or lost) will not report back: what it did is unknown.
        if (runState === 'stopping' && tool.runId === run?.id) return 'finishing';
        return tool.runId === run?.id && (runState === 'running' || runState === 'admitted') ? 'running' : 'unknown';
      },
      approvalFor: (tool: ToolItem) => byTool.get(tool.key),
      onAnswer: answer,
      onOpenGroup: (key: string) => setOpenGroups((current) => new Set([...current, key])),
    }),
    [conversation?.agentName, onOpenLink, retryKey, retryPrompt, byTool, runState, run?.id, answer],
  );
  const renderRow = useCallback((row: TimelineRowModel) => <TimelineRow row={row} context={context} />, [context]);

  const agent = agents.find((candidate) => candidate.name === conversation?.agentName);
  return (
    <section className="chat" aria-label="Chat">
      <header className="chat-header">
        <div className="chat-heading">
          <h1>{title ?? 'Loading…'}</h1>
          {conversation !== null && (
            <div className="chat-facts">
              <span className="fact" title="Agent and version">
                <UserRound size={13} aria-hidden /> {conversation.agentName} v{conversation.agentVersion}
              </span>
              <span className="fact" title="The folder this chat works in">
                <Folder size={13} aria-hidden /> {conversation.workspace === null ? "a folder in Ward's data" : escapeLineForWindow(conversation.workspace, 300)}
              </span>
              {state.usageTotal.turns > 0 && (
                <span className="fact" title="What this chat's turns used and cost" data-testid="chat-usage">
                  <Gauge size={13} aria-hidden /> Total: {describeUsage(state.usageTotal.tokens, state.usageTotal.costUsd)}
                </span>
              )}
            </div>
          )}
        </div>
      </header>
      <ErrorBanner text={error} />
      {run?.state === 'uncertain' && <UncertainBanner run={run} onReconcile={reconcile} />}
      {state.items.length === 0 ? (
        <div className={conversation?.lastSeq === 0 ? 'chat-empty' : 'chat-loading'}>
          {conversation === null || conversation.lastSeq !== 0 ? (
            'Loading…'
          ) : (
            <FolderGrants workspace={conversation.workspace} chatGrants={conversation.grants} agent={agent} />
          )}
        </div>
      ) : (
        <VirtualList items={rows} getKey={rowKey} estimateHeight={estimateRowHeight} renderItem={renderRow} label="Conversation" focusIndex={focusRow} />
      )}
      {(unplaced.length > 0 || myElicitations.length > 0) && (
        <div className="approvals-unplaced">
          {unplaced.map((approval) => (
            <ApprovalPrompt key={approval.id} approval={approval} onAnswer={(value) => answer(approval.id, value)} />
          ))}
          {myElicitations.map((elicitation) => (
            <ElicitationPrompt key={elicitation.id} elicitation={elicitation} onAnswer={(action, content) => onAnswerElicitation!(elicitation.id, action, content)} />
          ))}
        </div>
      )}
      <ErrorBanner text={actionError} />
      <Composer run={run} onSend={send} onStop={stop} focusKey={conversationId} onWriting={prepare} />
    </section>
  );
}
