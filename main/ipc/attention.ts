/**
 * Draws the person to an approval waiting in a window they are not looking at: a badge on the
 * app icon with the number waiting (where the OS has one) and a notification for each new one
 * while no Ward window has focus. Before this, a question in a background window went unseen
 * until its timeout denied it. The OS calls sit behind AttentionPort (Electron in
 * main/electron, a recording double in the test harness).
 */
import type { PendingApprovalView } from '../../common/views.js';
import { parseNamespace } from '../app/namespaces.js';
import type { ApprovalPort } from '../app/approvals.js';

export interface AttentionNote {
  readonly title: string;
  readonly body: string;
}

export interface AttentionPort {
  /** Whether a Ward window has the person's focus (then that window shows the question). */
  focused(): boolean;
  /** An OS notification; `onClick` brings Ward forward. */
  notify(note: AttentionNote, onClick: () => void): void;
  /** The number on the app icon; 0 clears it. */
  setBadge(count: number): void;
}

/** What a notification says: who asks for what (text main already escaped and bounded). */
export function noteFor(approval: PendingApprovalView): AttentionNote {
  return { title: 'Ward: approval needed', body: `Agent ${approval.agent} ${approval.summary}` };
}

/** Follows every namespace's pending approvals; returns stop(). `bringForward` is what a click on a notification does. */
export function watchApprovals(approvals: ApprovalPort, attention: AttentionPort, bringForward: () => void): () => void {
  const pending = new Map<string, readonly PendingApprovalView[]>();
  let seen = new Set<string>();
  return approvals.onChange((namespace) => {
    const now = approvals.pending(parseNamespace(namespace));
    pending.set(namespace, now);
    const all = [...pending.values()].flat();
    attention.setBadge(all.length);
    for (const approval of now) {
      if (!seen.has(approval.id) && !attention.focused()) attention.notify(noteFor(approval), bringForward);
    }
    // Settled ones are forgotten (ids are random, never reused).
    seen = new Set(all.map((approval) => approval.id));
  });
}
