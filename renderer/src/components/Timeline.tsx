/** One row per timeline entry: a message, a tool call card (or a group of them), or a notice. */
import { ArchiveRestore, Ban, Check, ChevronDown, ChevronRight, CircleAlert, CircleHelp, Clock, History, Info, LoaderCircle, RotateCcw, Square, Undo2, Wrench, X } from 'lucide-react';
import { memo, useRef, useState, type ReactNode } from 'react';
import type { ApprovalAnswer, PendingApprovalView } from '../../../common/views.js';
import type { TimelineItem, TimelineRowModel, ToolItem } from '../state/timeline.js';
import { ApprovalPrompt } from './ApprovalPrompt.js';
import { CopyButton } from './CopyButton.js';
import { ChangesRow, undoOfConversationRewind, undoOfPrompt, type ChangesItem, type UndoRequest } from './FileChanges.js';
import { Markdown, type OpenLink } from './Markdown.js';

export function formatDuration(ms: number | null): string {
  if (ms === null) return '';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

/** "14:05" today, "3 Mar 14:05" before. */
export function formatTime(at: string, now = new Date()): string {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return '';
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return date.toDateString() === now.toDateString() ? time : `${date.toLocaleDateString(undefined, { day: 'numeric', month: 'short' })} ${time}`;
}

/** Tool texts longer than this are cut on screen, with the rest a click away. */
export const TOOL_TEXT_CAP = 2_000;

/** What a tool card is doing, with what the run and the pending approvals say. */
export type ToolPhase = ToolItem['status'] | 'waiting' | 'finishing';

const PHASES: Readonly<Record<ToolPhase, { text: string; icon: ReactNode }>> = {
  running: { text: 'running…', icon: <LoaderCircle size={14} className="spin" aria-hidden /> },
  waiting: { text: 'waiting for you', icon: <Clock size={14} aria-hidden /> },
  finishing: { text: 'finishing after Stop', icon: <Square size={12} aria-hidden /> },
  ok: { text: 'done', icon: <Check size={14} aria-hidden /> },
  error: { text: 'error', icon: <X size={14} aria-hidden /> },
  denied: { text: 'denied', icon: <Ban size={14} aria-hidden /> },
  unknown: { text: 'unknown', icon: <CircleHelp size={14} aria-hidden /> },
};

/** A long text cut at TOOL_TEXT_CAP, with "Show all" and "Copy" (which always copies all of it). */
function CappedText({ text, className, what }: { text: string; className: string; what: string }) {
  const [whole, setWhole] = useState(false);
  const cut = !whole && text.length > TOOL_TEXT_CAP;
  return (
    <div className="capped">
      <pre className={className}>{cut ? `${text.slice(0, TOOL_TEXT_CAP)}…` : text}</pre>
      <div className="capped-actions">
        {cut && (
          <button type="button" className="link-button" aria-label={`Show all ${what}`} onClick={() => setWhole(true)}>
            Show all ({text.length.toLocaleString()} characters)
          </button>
        )}
        <CopyButton text={text} label={`Copy ${what}`} />
      </div>
    </div>
  );
}

export interface ToolCardProps {
  readonly item: ToolItem;
  readonly phase?: ToolPhase;
  readonly approval?: PendingApprovalView | undefined;
  readonly onAnswer?: (approvalId: string, answer: ApprovalAnswer) => void;
}

export function ToolCallEntry({ item, phase = item.status, approval, onAnswer }: ToolCardProps) {
  const [toggled, setToggled] = useState<boolean | null>(null);
  // Errors open by themselves, the same live as on replay; the person's choice wins once made.
  const open = toggled ?? item.status === 'error';
  const shown = PHASES[phase];
  const denied = item.permissions.some((note) => note.decision === 'deny');
  return (
    <div className={`tool-call tool-${phase}`} data-testid="tool-call">
      <button type="button" className="tool-summary" aria-expanded={open} onClick={() => setToggled(!open)}>
        {open ? <ChevronDown size={14} aria-hidden /> : <ChevronRight size={14} aria-hidden />}
        <Wrench size={14} aria-hidden className="tool-icon" />
        <span className="tool-name">{item.tool}</span>
        {item.summary !== '' && <span className="tool-args-summary">{item.summary}</span>}
        <span className={`tool-state tool-state-${phase}`}>
          {shown.icon}
          <span className="tool-status">{phase === 'denied' && item.permissions.some((note) => note.byPerson === true && note.decision === 'deny') ? 'Denied by you' : shown.text}</span>
        </span>
        {item.changedFiles !== undefined && (
          <span className="tool-changed" data-testid="tool-changed" title={item.changedFiles.shared ? 'Changed by the calls the model made together in one message' : 'Changed by this call'}>
            changed {item.changedFiles.count} {item.changedFiles.count === 1 ? 'file' : 'files'}
            {item.changedFiles.shared ? ' (with the calls beside it)' : ''}
          </span>
        )}
        {item.durationMs !== null && <span className="tool-duration">{formatDuration(item.durationMs)}</span>}
        {denied && phase !== 'denied' && <Ban size={14} aria-label="a permission was denied" className="tool-denied-mark" />}
      </button>
      {approval !== undefined && onAnswer !== undefined && <ApprovalPrompt approval={approval} onAnswer={(answer) => onAnswer(approval.id, answer)} />}
      {open && (
        <div className="tool-details">
          {item.permissions.map((note, index) => (
            <div key={index} className={`tool-permission permission-${note.decision}`}>
              {note.decision === 'allow' ? <Check size={12} aria-hidden /> : <Ban size={12} aria-hidden />} {note.text}
            </div>
          ))}
          <div className="tool-label">Arguments</div>
          {item.args === '' ? <pre className="tool-args">(none)</pre> : <CappedText text={item.args} className="tool-args" what="arguments" />}
          {item.output !== null && (
            <>
              <div className="tool-label">{item.status === 'error' ? 'Error' : 'Result'}</div>
              {item.output === '' ? <pre className="tool-output">(empty)</pre> : <CappedText text={item.output} className="tool-output" what="result" />}
            </>
          )}
        </div>
      )}
    </div>
  );
}

export function ToolGroup({ tools, onOpen }: { tools: readonly ToolItem[]; onOpen: () => void }) {
  const errors = tools.filter((tool) => tool.status === 'error').length;
  const names = [...new Set(tools.map((tool) => tool.tool))].slice(0, 4).join(', ');
  return (
    <div className={`tool-group${errors > 0 ? ' tool-group-error' : ''}`} data-testid="tool-group">
      <button type="button" className="tool-summary" aria-expanded={false} onClick={onOpen}>
        <ChevronRight size={14} aria-hidden />
        <Wrench size={14} aria-hidden className="tool-icon" />
        <span className="tool-name">
          Ran {tools.length} tools{errors > 0 ? ` · ${errors} ${errors === 1 ? 'error' : 'errors'}` : ''}
        </span>
        <span className="tool-args-summary">{names}</span>
      </button>
    </div>
  );
}

const NOTICE_ICONS = { info: Info, stopped: Square, error: CircleAlert, warning: CircleAlert } as const;

export interface RowContext {
  readonly agent: string;
  readonly onOpenLink: OpenLink;
  /** The last answer offers Retry (sends its prompt again). */
  readonly retry: { readonly key: string; readonly run: () => void } | null;
  readonly toolPhase: (tool: ToolItem) => ToolPhase;
  readonly approvalFor: (tool: ToolItem) => PendingApprovalView | undefined;
  readonly onAnswer: (approvalId: string, answer: ApprovalAnswer) => void;
  readonly onOpenGroup: (key: string) => void;
  /** Prompts with tracked file changes after them (they offer to restore the files), and the change rows' actions; a review window has none. */
  readonly restorable?: ReadonlySet<string>;
  readonly onOpenChanges?: (item: ChangesItem) => void;
  readonly onUndo?: (request: UndoRequest) => void;
}

/** An answer longer than about two screens offers a way back to where it starts. */
const LONG_ANSWER_LINES = 40;
const LONG_ANSWER_CHARS = 4_000;

function isLongAnswer(text: string): boolean {
  return text.length > LONG_ANSWER_CHARS || text.split('\n', LONG_ANSWER_LINES + 1).length > LONG_ANSWER_LINES;
}

/** A prompt's rewinds: its files (when changes were tracked after it), the conversation, or both. */
function RestoreButtons({ item, context }: { item: Extract<TimelineItem, { kind: 'user' }>; context: RowContext }) {
  const { onUndo } = context;
  if (onUndo === undefined || item.rewound === true) return null;
  const files = context.restorable?.has(item.key) === true;
  const button = (label: string, scope: 'files' | 'conversation' | 'both', icon: ReactNode) => (
    <button type="button" className="icon-button" aria-label={label} title={label} onClick={() => onUndo(undoOfPrompt(item, scope))}>
      {icon}
    </button>
  );
  return (
    <>
      {files && button('Restore files to before this message', 'files', <Undo2 size={14} aria-hidden />)}
      {item.runId !== null && button('Restore the conversation to here', 'conversation', <History size={14} aria-hidden />)}
      {files && item.runId !== null && button('Restore files and conversation', 'both', <ArchiveRestore size={14} aria-hidden />)}
    </>
  );
}

function Message({ item, context }: { item: Extract<TimelineItem, { kind: 'user' | 'assistant' }>; context: RowContext }) {
  const mine = item.kind === 'user';
  const head = useRef<HTMLElement>(null);
  const toStart = (): void => {
    head.current?.scrollIntoView({ block: 'start' });
    head.current?.focus({ preventScroll: true });
  };
  return (
    <article className={`message message-${item.kind}${item.rewound === true ? ' message-rewound' : ''}`} data-testid="message" aria-label={mine ? 'You' : `Agent ${context.agent}`}>
      <header className="message-head" ref={head} tabIndex={-1}>
        <span className="message-author">{mine ? 'You' : context.agent}</span>
        <time className="message-time" dateTime={item.at}>
          {formatTime(item.at)}
        </time>
        {item.rewound === true && <span className="rewound-label">Rewound</span>}
        <span className="message-actions">
          <CopyButton text={item.text} label={mine ? 'Copy prompt' : 'Copy answer'} />
          {item.kind === 'user' && <RestoreButtons item={item} context={context} />}
          {context.retry?.key === item.key && (
            <button type="button" className="icon-button" aria-label="Retry" title="Send the last prompt again" onClick={context.retry.run}>
              <RotateCcw size={14} aria-hidden />
            </button>
          )}
        </span>
      </header>
      {mine ? <div className="message-text">{item.text}</div> : <Markdown source={item.text} onOpenLink={context.onOpenLink} />}
      {!mine && isLongAnswer(item.text) && (
        <button type="button" className="link-button jump-to-start" onClick={toStart}>
          Jump to the start of this answer
        </button>
      )}
    </article>
  );
}

function RowView({ row, context }: { row: TimelineRowModel; context: RowContext }) {
  if (row.kind === 'group') return <ToolGroup tools={row.tools} onOpen={() => context.onOpenGroup(row.tools[0]!.key)} />;
  const item = row.item;
  switch (item.kind) {
    case 'user':
    case 'assistant':
      return <Message item={item} context={context} />;
    case 'tool':
      return <ToolCallEntry item={item} phase={context.toolPhase(item)} approval={context.approvalFor(item)} onAnswer={context.onAnswer} />;
    case 'notice': {
      const Icon = NOTICE_ICONS[item.tone];
      return (
        <div className={`notice notice-${item.tone}`}>
          <Icon size={14} aria-hidden />
          <span>{item.text}</span>
          {item.rewindSeq !== undefined && item.rewound !== true && context.onUndo !== undefined && (
            <button type="button" className="link-button" onClick={() => context.onUndo?.(undoOfConversationRewind(item.rewindSeq!))}>
              <Undo2 size={14} aria-hidden /> Undo this rewind
            </button>
          )}
        </div>
      );
    }
    case 'changes':
      return <ChangesRow item={item} onOpen={context.onOpenChanges} onUndo={context.onUndo} />;
    case 'usage':
      return (
        <div className="turn-usage" data-testid="turn-usage">
          {item.text}
        </div>
      );
  }
}

/** A row re-renders only when its entry or what the chat around it says changes. */
export const TimelineRow = memo(RowView);

/** A first guess before a row is measured; close guesses keep the scrollbar steady. */
export function estimateRowHeight(row: TimelineRowModel): number {
  if (row.kind === 'group') return 44;
  const item = row.item;
  switch (item.kind) {
    case 'tool':
      return 44;
    case 'notice':
    case 'changes':
      return 36;
    case 'usage':
      return 24;
    default:
      // Row and message padding and the author line, then ~95 characters a line in the reading column.
      return 46 + Math.max(1, Math.ceil(item.text.length / 95)) * 22;
  }
}
