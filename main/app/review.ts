/**
 * Read-only review of a bundle (E4), for `ward review` and the desktop's review windows: the
 * bundle is checked, then read page by page; its events are parsed by their schemas exactly as
 * the journal feed's are. Nothing of any namespace is opened: no database, no keychain.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ReviewPageView, ReviewView } from '../../common/views.js';
import { WardError } from '../base/errors.js';
import { BUNDLE_PAGE_EVENTS, openBundle, type OpenedBundle } from '../export/bundle.js';
import { bundlePage } from './bundle-review.js';
import { toEventView } from './conversations.js';

/** Bundles a desktop keeps open at once; opening another closes the oldest. */
const MAX_OPEN_REVIEWS = 8;

function toView(reviewId: string, bundle: OpenedBundle): ReviewView {
  const { verdict } = bundle;
  const { statement } = verdict;
  return {
    reviewId,
    fileName: path.basename(verdict.file),
    ok: verdict.ok,
    signature: verdict.signature,
    signer: verdict.signer,
    problems: verdict.problems,
    firstBadSeq: verdict.firstBadSeq,
    conversationId: statement.conversationId,
    title: statement.title,
    agent: `${statement.agent.name} v${statement.agent.version}`,
    exportedAt: statement.exportedAt,
    events: verdict.events,
    uncertainRuns: statement.uncertainRuns,
    pageEvents: BUNDLE_PAGE_EVENTS,
    pageCount: bundle.pageCount,
  };
}

export class ReviewService {
  private readonly open = new Map<string, OpenedBundle>();

  async openFile(file: string): Promise<ReviewView> {
    const bundle = await openBundle(file);
    const reviewId = randomUUID();
    this.open.set(reviewId, bundle);
    if (this.open.size > MAX_OPEN_REVIEWS) await this.close(this.open.keys().next().value!);
    return toView(reviewId, bundle);
  }

  view(reviewId: string): ReviewView {
    return toView(reviewId, this.bundle(reviewId));
  }

  async events(reviewId: string, page: number): Promise<ReviewPageView> {
    const events = await bundlePage(this.bundle(reviewId), page);
    return { events: events.map(toEventView), notAsSigned: events.filter((event) => !event.signed).map((event) => event.seq) };
  }

  async close(reviewId: string): Promise<void> {
    const bundle = this.open.get(reviewId);
    this.open.delete(reviewId);
    await bundle?.close();
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.open.keys()].map((id) => this.close(id)));
  }

  private bundle(reviewId: string): OpenedBundle {
    const bundle = this.open.get(reviewId);
    if (bundle === undefined) throw new WardError('not_found', 'this review is no longer open; open the bundle again');
    return bundle;
  }
}
