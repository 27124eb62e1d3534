/**
 * A bundle shown read-only (E4): the verdict in a banner that names the signer, then the
 * conversation's timeline as the chat shows it, with no composer, no Stop and no approvals. The
 * window reaches nothing of any namespace: only the review channels.
 */
import { escapeLineForWindow } from '../../../common/display.js';
import { ShieldAlert } from 'lucide-react';
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ReviewView as Review } from '../../../common/views.js';
import { describeTotal } from '../../../common/usage.js';
import { errorText, unwrap } from '../api.js';
import { applyEvents } from '../state/apply-events.js';
import { readIncomingEvents } from '../state/incoming-events.js';
import { EMPTY_CONVERSATION, indexAtSeq, timelineRows, type ConversationState, type TimelineItem, type TimelineRowModel } from '../state/timeline.js';
import { estimateRowHeight, TimelineRow, type RowContext } from './Timeline.js';
import { VirtualList } from './VirtualList.js';

const rowKey = (row: TimelineRowModel) => row.key;
const NOTHING = new Set<string>();

export function ReviewView({ api, reviewId, onOpenLink }: { api: WardApi; reviewId: string; onOpenLink: (url: string) => void }) {
  const [review, setReview] = useState<Review | null>(null);
  const [state, setState] = useState<ConversationState>(EMPTY_CONVERSATION);
  const [error, setError] = useState<string | null>(null);
  /** The events the verifier could not match to what was signed, each marked on the row that shows it. */
  const [unsigned, setUnsigned] = useState<readonly number[]>([]);

  useEffect(() => {
    let cancelled = false;
    const load = async () => {
      const opened = await unwrap(api.review.get({ reviewId }));
      if (cancelled) return;
      setReview(opened);
      for (let page = 0; page < opened.pageCount && !cancelled; page++) {
        // A review's pages enter the renderer here: parsed once, then folded as the chat folds them.
        const { events, notAsSigned } = await unwrap(api.review.events({ reviewId, page }));
        if (cancelled) break;
        setState((current) => applyEvents(current, readIncomingEvents(events)));
        if (notAsSigned.length > 0) setUnsigned((current) => [...current, ...notAsSigned]);
      }
    };
    load().catch((failure: unknown) => !cancelled && setError(errorText(failure)));
    return () => {
      cancelled = true;
    };
  }, [api, reviewId]);

  const [openGroups, setOpenGroups] = useState<ReadonlySet<string>>(NOTHING);
  const rows = useMemo(() => timelineRows(state.items, openGroups, () => false), [state.items, openGroups]);
  const marks = useMemo(() => notAsSignedByRow(rows, state.items, unsigned), [rows, state.items, unsigned]);
  // Read-only: no Retry, no approvals; a call still open in the bundle never reported back.
  const context = useMemo<RowContext>(
    () => ({
      agent: review?.agent ?? 'Agent',
      onOpenLink,
      retry: null,
      toolPhase: (tool) => (tool.status === 'running' ? 'unknown' : tool.status),
      approvalFor: () => undefined,
      onAnswer: () => undefined,
      onOpenGroup: (key) => setOpenGroups((current) => new Set([...current, key])),
    }),
    [review?.agent, onOpenLink],
  );
  const renderRow = useCallback((row: TimelineRowModel) => <ReviewRow row={row} context={context} notAsSigned={marks.get(row.key)} />, [context, marks]);

  return (
    <section className="chat review" aria-label="Review">
      {review !== null && (
        <div className={`banner ${review.ok ? 'banner-review' : 'banner-error'}`} role="status" data-testid="review-banner">
          <strong>Read-only review · {review.ok ? `signed by ${line(review.signer)}` : 'NOT VERIFIED'}</strong>
          {!review.ok && <div>{line(review.problems[0] ?? '')}</div>}
          <div className="muted">
            {line(review.fileName)} · exported {line(review.exportedAt)} · {review.events} events
            {review.uncertainRuns.length > 0 && ` · ${review.uncertainRuns.length} run(s) with an unknown outcome`}
          </div>
        </div>
      )}
      <header className="chat-header">
        <h1>{review === null ? 'Opening…' : line(review.title)}</h1>
        {review !== null && <span className="chat-agent">{line(review.agent)}</span>}
        {state.usageTotal.turns > 0 && <span className="chat-usage">Total: {describeTotal(state.usageTotal)}</span>}
      </header>
      {error !== null && (
        <div className="banner banner-error" role="alert">
          {error}
        </div>
      )}
      {state.items.length > 0 && <VirtualList items={rows} getKey={rowKey} estimateHeight={estimateRowHeight} renderItem={renderRow} label="Conversation" />}
    </section>
  );
}

/** A row of the bundle; one showing an event the verifier could not match says so above it. */
function ReviewRow({ row, context, notAsSigned }: { row: TimelineRowModel; context: RowContext; notAsSigned: readonly number[] | undefined }) {
  if (notAsSigned === undefined) return <TimelineRow row={row} context={context} />;
  return (
    <div className="not-as-signed" data-testid="not-as-signed">
      <div className="not-as-signed-mark">
        <ShieldAlert size={14} aria-hidden /> NOT AS SIGNED: {notAsSigned.length === 1 ? 'event' : 'events'} {describeSeqs(notAsSigned)} could not be matched to what was signed
      </div>
      <TimelineRow row={row} context={context} />
    </div>
  );
}

/** Shown seqs of a row's unmatched events: the first few, then how many more. */
function describeSeqs(seqs: readonly number[]): string {
  const shown = seqs.slice(0, 5).map((seq) => `#${seq}`).join(', ');
  return seqs.length > 5 ? `${shown} and ${seqs.length - 5} more` : shown;
}

/**
 * Each unmatched event on the row that shows it: the row of the last item made at or before it (a
 * tool's result lives in its call's row, a grouped call in its group's row). An event before every
 * item goes to the first row.
 */
function notAsSignedByRow(rows: readonly TimelineRowModel[], items: readonly TimelineItem[], unsigned: readonly number[]): ReadonlyMap<string, number[]> {
  const marks = new Map<string, number[]>();
  if (unsigned.length === 0 || rows.length === 0) return marks;
  const rowOfItem = new Map<string, string>();
  for (const row of rows) for (const item of row.kind === 'group' ? row.tools : [row.item]) rowOfItem.set(item.key, row.key);
  for (const seq of unsigned) {
    const index = indexAtSeq(items, seq) ?? 0;
    const key = rowOfItem.get(items[index]!.key) ?? rows[0]!.key;
    marks.set(key, [...(marks.get(key) ?? []), seq]);
  }
  return marks;
}

/** A bundle's field on one line: everything in a bundle came from outside this Ward (D1). */
function line(text: string): string {
  return escapeLineForWindow(text, 500);
}

/** The bundle a review window shows: `#review/<id>` in its address. */
export function reviewIdOf(hash: string): string | null {
  return /^#review\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(hash)?.[1] ?? null;
}

/** The whole page of a review window. */
export function ReviewWindow({ api, reviewId }: { api: WardApi; reviewId: string }) {
  const openLink = useCallback((url: string) => void unwrap(api.links.openExternal({ url })).catch(() => undefined), [api]);
  return (
    <div className="app app-review">
      <main className="content">
        <ReviewView api={api} reviewId={reviewId} onOpenLink={openLink} />
      </main>
    </div>
  );
}
