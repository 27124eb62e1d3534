/**
 * Read-only review of a bundle (E4), for `ward review` and the desktop's review windows: the
 * bundle is checked, then read page by page; its events are parsed by their schemas exactly as
 * the journal feed's are. Nothing of any namespace is opened: no database, no keychain.
 */
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ReviewPageView, ReviewView } from '../../common/views.js';
import { WardError } from '../base/errors.js';
import { BUNDLE_PAGE_EVENTS, openBundle, type BundleLine, type OpenedBundle } from '../export/bundle.js';
import type { JournalEvent } from '../store/journal.js';
import { toEventView } from './conversations.js';

// What `ward verify-bundle` and `ward review` open and print.
export { openBundle, parseSigner, verifyBundle, type BundleLine, type BundleVerdict, type EarlyVerdict } from '../export/bundle.js';

/** Bundles a desktop keeps open at once; opening another closes the oldest. */
const MAX_OPEN_REVIEWS = 8;

/** An event of a bundle, and whether it is the event signed (E4: review marks every one that is not). */
export type BundleEvent = JournalEvent & { readonly signed: boolean };

/** One line of a bundle as the journal would hand it out (hash and all); a line that is no event, as an unreadable one. */
export function bundleEvent(conversationId: string, { seq, line, text, signed }: BundleLine): BundleEvent {
  if (line === null) return { conversationId, seq, runId: null, type: 'unreadable-line', payload: { text: text.slice(0, 200) }, createdAt: '', hash: '', signed };
  let payload: unknown = null;
  try {
    payload = JSON.parse(line.payload);
  } catch {
    // readJournalEvent reports it unreadable
  }
  return { conversationId, seq: line.seq, runId: typeof line.runId === 'string' ? line.runId : null, type: String(line.type), payload, createdAt: String(line.createdAt), hash: String(line.hash), signed };
}

/** One page of a bundle's events. */
export async function bundlePage(bundle: OpenedBundle, page: number): Promise<BundleEvent[]> {
  const conversationId = bundle.verdict.statement.conversationId;
  return (await bundle.readPage(page)).map((line) => bundleEvent(conversationId, line));
}

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
