/**
 * J3: anchors of a conversation's chain head. After a run, the head (seq, hash) is stored with a
 * MAC made with the namespace's anchor key, which lives in the keychain and never in this
 * database. Anyone able to rewrite the database can recompute the hash chain, but not the MACs:
 * a rewritten event before an anchor, a removed tail, or a removed anchor shows up here.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Journal } from './journal.js';

export interface Anchor {
  readonly seq: number;
  readonly hash: string;
  /** Empty for the mark migration 6 left at the head of a journal older than anchoring. */
  readonly mac: string;
}

/** What the anchors say about a conversation's journal. */
export interface AnchorCheck {
  readonly anchors: number;
  /** The newest anchored event, 0 when none is. */
  readonly anchoredSeq: number;
  /** Events up to this one were journaled before anchoring existed (0: none were). */
  readonly predates: number;
  /** Whether the MACs were checked with the keychain's key (false: it could not be read). */
  readonly keyChecked: boolean;
  /**
   * Whether only the anchor key can vouch for this journal: an anchor carries a MAC, or the
   * journal itself says a run's end was anchored (so a removed anchor is seen without the key).
   */
  readonly needsKey: boolean;
  /** The first problem, naming the first event that may be bad; null when the anchors hold. */
  readonly problem: { readonly firstBadSeq: number; readonly reason: string } | null;
}

/** What the MAC covers: the conversation, the anchored event and its hash, under a fixed label. */
export function anchorMac(key: Buffer, conversationId: string, seq: number, hash: string): string {
  return createHmac('sha256', key).update(JSON.stringify(['ward-anchor/v1', conversationId, seq, hash])).digest('hex');
}

function sameHex(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}

export class AnchorRepository {
  /**
   * Set once this process holds the namespace's anchor key: every run end from then on is
   * anchored, and its run_finished says so (the keyless record `needsKey` reads).
   */
  keyAtHand = false;

  constructor(private readonly db: Database) {}

  /** Anchors the conversation's current head (nothing to do for an empty journal, or a head already anchored). */
  anchorHead(journal: Journal, conversationId: string, key: Buffer): Anchor | null {
    const head = journal.head(conversationId);
    if (head.seq === 0) return null;
    const anchor = { seq: head.seq, hash: head.hash, mac: anchorMac(key, conversationId, head.seq, head.hash) };
    this.db
      .prepare('INSERT INTO anchors (conversation_id, seq, hash, mac, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING')
      .run(conversationId, anchor.seq, anchor.hash, anchor.mac, new Date().toISOString());
    return anchor;
  }

  list(conversationId: string): Anchor[] {
    if (!this.hasTable()) return [];
    return this.db.prepare<[string], Anchor>('SELECT seq, hash, mac FROM anchors WHERE conversation_id = ? ORDER BY seq').all(conversationId);
  }

  /** The newest run_finished that says its run's end was anchored (0: none does); part of the chain, so it needs no key. */
  private lastAnchoredRunEnd(conversationId: string): number {
    return (
      this.db
        .prepare<[string], { seq: number | null }>("SELECT max(seq) AS seq FROM events WHERE conversation_id = ? AND type = 'run_finished' AND json_extract(payload, '$.anchored') = 1")
        .get(conversationId)?.seq ?? 0
    );
  }

  /** A database opened read-only at an older schema has no anchors table: no anchors. */
  private hasTable(): boolean {
    return this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'anchors'").get() !== undefined;
  }

  /**
   * Checks every anchor against the chain as stored (run after the chain itself verified) and,
   * with the key, its MAC; with the key it also requires the last finished run to be anchored,
   * so removing anchors does not hide a rewrite. Without the key the MACs go unchecked, and the
   * result says so.
   */
  check(conversationId: string, key: Buffer | null): AnchorCheck {
    const anchors = this.list(conversationId);
    const hashAt = this.db.prepare<[string, number], { hash: string }>('SELECT hash FROM events WHERE conversation_id = ? AND seq = ?');
    const predates = anchors[0]?.mac === '' ? anchors[0].seq : 0;
    const needsKey = anchors.some((anchor) => anchor.mac !== '') || this.lastAnchoredRunEnd(conversationId) > 0;
    const result = (anchoredSeq: number, problem: AnchorCheck['problem']): AnchorCheck => ({ anchors: anchors.length, anchoredSeq, predates, keyChecked: key !== null, needsKey, problem });
    let anchoredSeq = 0;
    for (const [index, anchor] of anchors.entries()) {
      const stored = hashAt.get(conversationId, anchor.seq);
      if (stored === undefined) return result(anchoredSeq, { firstBadSeq: anchor.seq, reason: `event ${anchor.seq} is missing: it was anchored when its run ended (the journal was cut short)` });
      if (stored.hash !== anchor.hash) {
        return result(anchoredSeq, {
          firstBadSeq: anchoredSeq + 1,
          reason: `an event in #${anchoredSeq + 1}–#${anchor.seq} was altered and the chain recomputed: event ${anchor.seq} no longer matches its anchor`,
        });
      }
      // Only the first row may be the unkeyed mark of a journal older than anchoring.
      if (anchor.mac === '' && index > 0) return result(anchoredSeq, { firstBadSeq: anchoredSeq + 1, reason: `the anchor of event ${anchor.seq} carries no MAC (forged)` });
      if (key !== null && anchor.mac !== '' && !sameHex(anchor.mac, anchorMac(key, conversationId, anchor.seq, anchor.hash))) {
        return result(anchoredSeq, {
          firstBadSeq: anchoredSeq + 1,
          reason: `the anchor of event ${anchor.seq} was not made with this namespace's anchor key (forged, or copied from another data folder)`,
        });
      }
      anchoredSeq = anchor.seq;
    }
    if (key !== null) {
      const lastEnd = this.db
        .prepare<[string], { seq: number | null }>("SELECT max(seq) AS seq FROM events WHERE conversation_id = ? AND type = 'run_finished'")
        .get(conversationId)?.seq;
      if (lastEnd != null && lastEnd > anchoredSeq) {
        return result(anchoredSeq, {
          firstBadSeq: anchoredSeq + 1,
          reason: `the run that ended at event ${lastEnd} is not anchored (${anchoredSeq === 0 ? 'no anchor at all' : `the last anchor is at event ${anchoredSeq}`}): anchors were removed, or the keychain was unavailable when it ended`,
        });
      }
    }
    return result(anchoredSeq, null);
  }
}
