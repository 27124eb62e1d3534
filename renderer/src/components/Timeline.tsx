/** One row per timeline item: a message, a tool call entry, or a notice. */
import { useState } from 'react';
import type { TimelineItem } from '../state/timeline.js';
import { Markdown, type OpenLink } from './Markdown.js';

export function formatDuration(ms: number | null): string {
  if (ms === null) return '';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
}

const STATUS_TEXT = { running: 'running…', ok: 'done', error: 'error' } as const;

export function ToolCallEntry({ item }: { item: Extract<TimelineItem, { kind: 'tool' }> }) {
  const [open, setOpen] = useState(item.status === 'error');
  return (
    <div className={`tool-call tool-${item.status}`} data-testid="tool-call">
      <button type="button" className="tool-summary" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span className="tool-name">{item.tool}</span>
        <span className="tool-status">{STATUS_TEXT[item.status]}</span>
        {item.durationMs !== null && <span className="tool-duration">{formatDuration(item.durationMs)}</span>}
      </button>
      {open && (
        <div className="tool-details">
          <div className="tool-label">Arguments</div>
          <pre className="tool-args">{item.args || '(none)'}</pre>
          {item.output !== null && (
            <>
              <div className="tool-label">{item.status === 'error' ? 'Error' : 'Result'}</div>
              <pre className="tool-output">{item.output || '(empty)'}</pre>
            </>
          )}
        </div>
      )}
    </div>
  );
}

export function TimelineRow({ item, onOpenLink }: { item: TimelineItem; onOpenLink: OpenLink }) {
  switch (item.kind) {
    case 'user':
      return (
        <div className="message message-user" data-testid="message">
          <div className="message-author">You</div>
          <div className="message-text">{item.text}</div>
        </div>
      );
    case 'assistant':
      return (
        <div className="message message-assistant" data-testid="message">
          <div className="message-author">Agent</div>
          <Markdown source={item.text} onOpenLink={onOpenLink} />
        </div>
      );
    case 'tool':
      return <ToolCallEntry item={item} />;
    case 'notice':
      return (
        <div className={`notice notice-${item.tone}`} role={item.tone === 'error' ? 'alert' : 'status'}>
          {item.text}
        </div>
      );
    case 'usage':
      return (
        <div className="turn-usage" data-testid="turn-usage">
          {item.text}
        </div>
      );
  }
}

/** A first guess before a row is measured; close guesses keep the scrollbar steady. */
export function estimateRowHeight(item: TimelineItem): number {
  switch (item.kind) {
    case 'tool':
      return 44;
    case 'notice':
      return 36;
    case 'usage':
      return 24;
    default:
      return 56 + Math.ceil(item.text.length / 90) * 20;
  }
}
