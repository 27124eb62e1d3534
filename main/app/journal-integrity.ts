/**
 * `ward verify` and the anchors behind it: J2 (the hash chain names the first altered or removed
 * event) and J3 (after each run the chain head is anchored with the namespace's keychain key, so
 * a chain rewritten and recomputed in the database no longer matches). Verifying reads only:
 * without a reachable keychain the anchors are checked against the chain, their MACs are not,
 * and a journal that had anchors (or says a run's end was anchored) is reported unchecked.
 */
import { describeError, isWardError } from '../base/errors.js';
import type { AnchorCheck } from '../store/anchors.js';
import type { VerifyResult } from '../store/journal.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { NamespaceKeys } from './namespace-keys.js';

export interface IntegrityReport {
  readonly ok: boolean;
  readonly count: number;
  readonly firstBadSeq: number | null;
  readonly reason: string | null;
  /** Null when the chain is broken (anchors are not looked at then) or nothing was ever anchored or run. */
  readonly anchors: (AnchorCheck & { readonly keyProblem: string | null }) | null;
  /** Why anchors this journal had could not be checked (the keychain could not be read); null when they were, or it had none. */
  readonly unchecked: string | null;
}

export class JournalIntegrity {
  constructor(private readonly keys: NamespaceKeys) {}

  /** As a turn starts: reads (or makes) the anchor key, so the turn's end can say it will be anchored. Never throws. */
  prepare(store: NamespaceStore): void {
    this.keys.anchorKey(store.namespace, true).then(
      (key) => {
        if (key !== null) store.anchors.keyAtHand = true;
      },
      () => undefined, // the anchor after the turn tries again
    );
  }

  /** J3: anchors the conversation's head after a run. Never throws: a missed anchor is covered by the next run's, and `ward verify` reports it. */
  async anchor(store: NamespaceStore, conversationId: string): Promise<void> {
    try {
      const key = await this.keys.anchorKey(store.namespace, true);
      if (key === null) return;
      store.anchors.keyAtHand = true;
      store.anchors.anchorHead(store.journal, conversationId, key);
    } catch {
      // keychain or database unavailable: see above
    }
  }

  /** The anchors of a conversation, with the key when the keychain can give it. */
  async checkAnchors(store: NamespaceStore, conversationId: string): Promise<IntegrityReport['anchors']> {
    const anchored = store.anchors.list(conversationId).length > 0;
    const ran = store.db.prepare("SELECT 1 FROM events WHERE conversation_id = ? AND type = 'run_finished' LIMIT 1").get(conversationId) !== undefined;
    // A journal nothing ran in and nothing anchored: the keychain is not asked (verify works without one).
    if (!anchored && !ran) return null;
    let key: Buffer | null = null;
    let keyProblem: string | null = null;
    try {
      key = await this.keys.anchorKey(store.namespace, false);
    } catch (error) {
      if (!isWardError(error)) throw error;
      keyProblem = `the keychain could not be read (${describeError(error).slice(0, 200)})`;
    }
    const check = store.anchors.check(conversationId, key);
    if (key === null && keyProblem === null && check.needsKey) {
      // Anchors with no key to check them against fail: a rewrite could have replaced them.
      const reason = `this keychain holds no journal anchor key for namespace ${store.namespace.name} (was the data folder moved from another user or machine?)`;
      return { ...check, keyProblem: reason, problem: check.problem ?? { firstBadSeq: 1, reason } };
    }
    return { ...check, keyProblem };
  }

  async verify(store: NamespaceStore, conversationId: string): Promise<IntegrityReport> {
    const chain: VerifyResult = store.journal.verify(conversationId);
    if (!chain.ok) return { ok: false, count: chain.count, firstBadSeq: chain.firstBadSeq, reason: chain.reason, anchors: null, unchecked: null };
    const anchors = await this.checkAnchors(store, conversationId);
    const problem = anchors?.problem ?? null;
    // Without the key a rewrite can remove or replace anchors unseen: a journal that had any is not vouched for.
    const unchecked = problem === null && anchors?.keyChecked === false && anchors.needsKey ? `its anchors could not be checked: ${anchors.keyProblem ?? 'no key'}` : null;
    return { ok: problem === null && unchecked === null, count: chain.count, firstBadSeq: problem?.firstBadSeq ?? null, reason: problem?.reason ?? null, anchors, unchecked };
  }
}
