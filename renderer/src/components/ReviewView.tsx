/**
 * A bundle shown read-only (E4): the verdict in a banner that names the signer, then the
 * conversation's timeline as the chat shows it, with no composer, no Stop and no approvals. The
 * window reaches nothing of any namespace: only the review channels.
 */
import { escapeLineForWindow } from '../../../common/display.js';
import { useCallback, useEffect, useMemo, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ReviewView as Review } from '../../../common/views.js';
import { describeTotal } from '../../../common/usage.js';
import { errorText, unwrap } from '../api.js';
import { applyEvents } from '../state/apply-events.js';
import { readIncomingEvents } from '../state/incoming-events.js';
import { EMPTY_CONVERSATION, timelineRows, type ConversationState, type TimelineRowModel } from '../state/timeline.js';
import { estimateRowHeight, TimelineRow, type RowContext } from './Timeline.js';
import { VirtualList } from './VirtualList.js';

const rowKey = (row: TimelineRowModel) => row.key;
const NOTHING = new Set<string>();

export function ReviewView({ api, reviewId, onOpenLink }: { api: WardApi; reviewId: string; onOpenLink: (url: string) => void }) {
  const [review, setReview] = useState<Review | null>(null);
  const [state, setState] = useState<ConversationState>(EMPTY_CONVERSATION);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    const load = async () => {
      const opened = await unwrap(api.review.get({ reviewId }));
      if (cancelled) return;
      setReview(opened);
      for (let page = 0; page < opened.pageCount && !cancelled; page++) {
        // A review's pages enter the renderer here: parsed once, then folded as the chat folds them.
        const events = readIncomingEvents(await unwrap(api.review.events({ reviewId, page })));
        if (!cancelled) setState((current) => applyEvents(current, events));
      }
    };
    load().catch((failure: unknown) => !cancelled && setError(errorText(failure)));
    return () => {
      cancelled = true;
    };
  }, [api, reviewId]);

  const [openGroups, setOpenGroups] = useState<ReadonlySet<string>>(NOTHING);
  const rows = useMemo(() => timelineRows(state.items, openGroups, () => false), [state.items, openGroups]);
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
  const renderRow = useCallback((row: TimelineRowModel) => <TimelineRow row={row} context={context} />, [context]);

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
