/**
 * The chat: its header (title, agent, project folder, what it cost), the uncertain-run banner, the
 * journal-driven timeline with each approval on the tool call that asks, and the composer.
 * Escape stops the run from anywhere in the window (a dialog or an approval with focus takes its
 * own Escape first).
 */
import { Folder, Gauge, UserRound } from 'lucide-react';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { AgentView, ApprovalAnswer, ConversationView, ElicitationAction, ElicitationFieldValue, PendingApprovalView, PendingElicitationView } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { ElicitationPrompt } from './ElicitationPrompt.js';
import { errorText, unwrap } from '../api.js';
import type { PushRouter } from '../state/follow.js';
import { indexAtSeq, shownToolName, timelineRows, type TimelineItem, type TimelineRowModel, type ToolItem } from '../state/timeline.js';
import { describeTotal, type UsageTotal } from '../../../common/usage.js';
import { useChatRun } from '../state/use-chat-run.js';
import { useConversation } from '../state/use-conversation.js';
import { ApprovalBar, useApprovalJump } from './ApprovalBar.js';
import { ApprovalPrompt } from './ApprovalPrompt.js';
import { Composer } from './Composer.js';
import { ErrorBanner } from './PageNotice.js';
import { useFileChanges } from './FileChanges.js';
import { FolderGrants } from './FolderGrants.js';
import { estimateRowHeight, TimelineRow, type RowContext, type ToolPhase } from './Timeline.js';
import { UncertainBanner } from './UncertainBanner.js';
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

/** The row showing the item `key`: its own, or the group holding it. */
function rowOfItem(rows: readonly TimelineRowModel[], key: string | null): number | null {
  if (key === null) return null;
  const at = rows.findIndex((row) => (row.kind === 'item' ? row.key === key : row.tools.some((tool) => tool.key === key)));
  return at < 0 ? null : at;
}

/** The newest prompt and the answer after it (what Retry sends again, and where it is offered). */
function lastPromptOf(items: readonly TimelineItem[]) {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!;
    if (item.kind === 'user') return { item, answer: items.slice(index + 1).findLast((later) => later.kind === 'assistant') };
  }
  return null;
}

function ChatHeader({ title, conversation, usageTotal }: { readonly title: string | null; readonly conversation: ConversationView | null; readonly usageTotal: UsageTotal }) {
  return (
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
              {usageTotal.turns > 0 && (
                <span className="fact" title="What this chat's turns used and cost" data-testid="chat-usage">
                  <Gauge size={13} aria-hidden /> Total: {describeTotal(usageTotal)}
                </span>
              )}
            </div>
          )}
        </div>
      </header>
  );
}

/** Approvals not placed on a call, and servers' requests for input, below the timeline. */
function Unplaced({ approvals, elicitations, onAnswer, onAnswerElicitation }: { approvals: readonly PendingApprovalView[]; elicitations: readonly PendingElicitationView[]; onAnswer: (approvalId: string, value: ApprovalAnswer) => void; onAnswerElicitation: ChatViewProps['onAnswerElicitation'] }) {
  if (approvals.length === 0 && elicitations.length === 0) return null;
  return (
    <div className="approvals-unplaced">
      {approvals.map((approval) => (
        <ApprovalPrompt key={approval.id} approval={approval} onAnswer={(value) => onAnswer(approval.id, value)} />
      ))}
      {elicitations.map((elicitation) => (
        <ElicitationPrompt key={elicitation.id} elicitation={elicitation} onAnswer={(action, content) => onAnswerElicitation!(elicitation.id, action, content)} />
      ))}
    </div>
  );
}

/** The chat's title, escaped, and told to the window as it changes. */
function useTitle(conversation: ConversationView | null, onTitle: ((title: string) => void) | undefined): string | null {
  const title = conversation === null ? null : escapeLineForWindow(conversation.title, 200);
  useEffect(() => {
    if (title !== null) onTitle?.(title);
  }, [title, onTitle]);
  return title;
}

export function ChatView({ api, router, namespace, conversationId, approvals, agents = [], elicitations = [], onAnswerElicitation, onOpenLink, onRunChange, onTitle, announce, focusSeq = null }: ChatViewProps) {
  const { state, conversation, error, refresh } = useConversation(api, router, namespace, conversationId);
  // Focused once the replay has reached the event.
  const focusIndex = useMemo(() => (focusSeq === null || state.lastSeq < focusSeq ? null : indexAtSeq(state.items, focusSeq)), [focusSeq, state.items, state.lastSeq]);
  const [actionError, setActionError] = useState<string | null>(null);
  const [openGroups, setOpenGroups] = useState<ReadonlySet<string>>(new Set());
  const { run, runState, send, prepare, stop, reconcile } = useChatRun({ api, namespace, conversationId, journalRun: state.run, conversation, refresh, onError: setActionError, onRunChange, announce });
  const title = useTitle(conversation, onTitle);
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
  const focusRow = useMemo(() => rowOfItem(rows, focusIndex === null ? null : state.items[focusIndex]!.key), [focusIndex, rows, state.items]);

  const { jumpRow, showApproval, frame } = useApprovalJump(rows, (row) => (row.kind === 'item' ? byTool.has(row.key) : row.tools.some((tool) => byTool.has(tool.key))));

  const lastPrompt = useMemo(() => lastPromptOf(state.items), [state.items]);
  const idle = run === null || run.state === 'succeeded' || run.state === 'failed' || run.state === 'stopped';
  const retryPrompt = lastPrompt?.item.kind === 'user' ? lastPrompt.item.prompt : null;
  const retryKey = idle && lastPrompt !== null ? (lastPrompt.answer?.key ?? lastPrompt.item.key) : null;
  const { fileActions, dialogs } = useFileChanges(api, namespace, conversationId, state.items);
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
      ...fileActions,
    }),
    [conversation?.agentName, onOpenLink, retryKey, retryPrompt, byTool, runState, run?.id, answer, fileActions],
  );
  const renderRow = useCallback((row: TimelineRowModel) => <TimelineRow row={row} context={context} />, [context]);

  const agent = agents.find((candidate) => candidate.name === conversation?.agentName);
  return (
    <section className="chat" aria-label="Chat" ref={frame}>
      <ChatHeader title={title} conversation={conversation} usageTotal={state.usageTotal} />
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
        <VirtualList items={rows} getKey={rowKey} estimateHeight={estimateRowHeight} renderItem={renderRow} label="Conversation" focusIndex={jumpRow ?? focusRow} />
      )}
      <Unplaced approvals={unplaced} elicitations={myElicitations} onAnswer={answer} onAnswerElicitation={onAnswerElicitation} />
      <ErrorBanner text={actionError} />
      <ApprovalBar approvals={mine} frame={frame} rows={rows} onShow={showApproval} />
      {dialogs}
      <Composer run={run} onSend={send} onStop={stop} focusKey={conversationId} onWriting={prepare} />
    </section>
  );
}
