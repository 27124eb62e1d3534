/**
 * A bundle's events as `ward review` prints them and the desktop's review windows show them. Apart
 * from the review service (review.ts), so the two bundle commands load no more of the app than
 * the bundle reader and the event schemas: `ward review` starts from its own lean build.
 */
import type { BundleLine, OpenedBundle } from '../export/bundle.js';
import type { JournalEvent } from '../store/journal.js';

// What `ward verify-bundle` and `ward review` open and print.
export { openBundle, parseSigner, verifyBundle, type BundleLine, type BundleVerdict, type EarlyVerdict } from '../export/bundle.js';

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
