/**
 * An approval is never out of sight: while one of this chat's approvals waits, a bar above the
 * composer says so, and when its card is scrolled out of view (or out of the rendered rows) the
 * bar offers "approval waiting ↓", which brings the card back.
 */
import { ShieldQuestion } from 'lucide-react';
import { useCallback, useEffect, useRef, useState, type RefObject } from 'react';
import type { PendingApprovalView } from '../../../common/views.js';

/** Whether an approval card is on screen inside `frame` (the chat), checked as the chat scrolls or resizes. */
function useCardInView(frame: RefObject<HTMLElement | null>, waiting: number, rows: unknown): boolean {
  const [inView, setInView] = useState(true);
  useEffect(() => {
    const root = frame.current;
    if (root === null || waiting === 0) return;
    const check = () => {
      // A question not placed on a call waits below the timeline, always in view.
      if (root.querySelector('.approvals-unplaced [data-testid="approval"]') !== null) return setInView(true);
      const list = root.querySelector('.vlist');
      const card = root.querySelector('.vlist [data-testid="approval"]');
      if (list === null || card === null) return setInView(false);
      const shown = card.getBoundingClientRect();
      const viewport = list.getBoundingClientRect();
      setInView(shown.bottom > viewport.top + 8 && shown.top < viewport.bottom - 8);
    };
    check();
    // Scroll does not bubble: listen in the capture phase, for the list inside.
    root.addEventListener('scroll', check, true);
    window.addEventListener('resize', check);
    return () => {
      root.removeEventListener('scroll', check, true);
      window.removeEventListener('resize', check);
    };
  }, [frame, waiting, rows]);
  return inView;
}

/**
 * The row "approval waiting ↓" scrolls to: the first that `waits`, set on a click and cleared
 * right after the list scrolled, so the next click scrolls again; and the chat's element.
 */
export function useApprovalJump<Row>(rows: readonly Row[], waits: (row: Row) => boolean): { jumpRow: number | null; showApproval: () => void; frame: RefObject<HTMLElement | null> } {
  const [jumpRow, setJumpRow] = useState<number | null>(null);
  // The chat the bar looks for the card in.
  const frame = useRef<HTMLElement>(null);
  useEffect(() => {
    if (jumpRow !== null) setJumpRow(null);
  }, [jumpRow]);
  // The newest test, without a new callback each render.
  const latest = useRef(waits);
  latest.current = waits;
  const showApproval = useCallback(() => {
    const at = rows.findIndex((row) => latest.current(row));
    if (at >= 0) setJumpRow(at);
  }, [rows]);
  return { jumpRow, showApproval, frame };
}

export function ApprovalBar({ approvals, frame, rows, onShow }: { approvals: readonly PendingApprovalView[]; frame: RefObject<HTMLElement | null>; rows: unknown; onShow: () => void }) {
  const inView = useCardInView(frame, approvals.length, rows);
  if (approvals.length === 0) return null;
  const first = approvals[0]!;
  return (
    <div className="approval-bar" role="status" data-testid="approval-bar">
      <ShieldQuestion size={16} aria-hidden className="approval-icon" />
      <span className="approval-bar-text">{approvals.length === 1 ? `Agent ${first.agent} ${first.summary}: waiting for your answer` : `${approvals.length} approvals are waiting for your answer`}</span>
      {!inView && (
        <button type="button" className="approval-pill" onClick={onShow}>
          approval waiting ↓
        </button>
      )}
    </div>
  );
}
