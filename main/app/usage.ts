/**
 * What runs used and cost: per turn (the session total's growth, common/usage.ts), per
 * conversation, and per namespace per day (UTC), for `ward usage`, `ward conversations` and the
 * desktop. Read from the journal's `run_started` (the model), `usage`, `model_call` and `run_finished` events.
 */
import type { UsageSummaryView } from '../../common/views.js';
import { readJournalEvent } from '../../common/events.js';
import { addTurn, NO_USAGE, UsageTally, type TurnUsage, type UsageTotal } from '../../common/usage.js';
import type { NamespaceStore } from '../store/namespace-store.js';

export interface ConversationTurn extends TurnUsage {
  readonly conversationId: string;
}

interface UsageRow {
  conversation_id: string;
  run_id: string | null;
  type: string;
  payload: string;
  created_at: string;
}

export class UsageService {
  /** Every turn of the namespace (or of one conversation), in journal order per conversation. */
  turns(store: NamespaceStore, conversationId?: string): ConversationTurn[] {
    const rows = store.db
      .prepare<[string | null, string | null], UsageRow>(
        `SELECT conversation_id, run_id, type, payload, created_at FROM events
         WHERE type IN ('run_started', 'usage', 'model_call', 'run_finished') AND (? IS NULL OR conversation_id = ?)
         ORDER BY conversation_id, seq`,
      )
      .iterate(conversationId ?? null, conversationId ?? null);
    const turns: ConversationTurn[] = [];
    let conversation: string | null = null;
    let tally = new UsageTally();
    const finish = (id: string | null) => {
      if (id !== null) for (const turn of tally.unfinished()) turns.push({ ...turn, conversationId: id });
    };
    for (const row of rows) {
      if (conversation !== row.conversation_id) {
        finish(conversation);
        conversation = row.conversation_id;
        tally = new UsageTally();
      }
      let payload: unknown = null;
      try {
        payload = JSON.parse(row.payload);
      } catch {
        continue;
      }
      const turn = tally.add(row.run_id, row.created_at, readJournalEvent(row.type, payload));
      if (turn !== null) turns.push({ ...turn, conversationId: row.conversation_id });
    }
    finish(conversation);
    return turns;
  }

  /** Totals per conversation. */
  byConversation(store: NamespaceStore): Map<string, UsageTotal> {
    const totals = new Map<string, UsageTotal>();
    for (const turn of this.turns(store)) totals.set(turn.conversationId, addTurn(totals.get(turn.conversationId) ?? NO_USAGE, turn));
    return totals;
  }

  /** Totals per day (UTC) from `since` on (a YYYY-MM-DD day, inclusive), and their sum. */
  summary(store: NamespaceStore, since?: string): UsageSummaryView {
    const days = new Map<string, UsageTotal>();
    let total = NO_USAGE;
    for (const turn of this.turns(store)) {
      const day = turn.at.slice(0, 10);
      if (since !== undefined && day < since) continue;
      days.set(day, addTurn(days.get(day) ?? NO_USAGE, turn));
      total = addTurn(total, turn);
    }
    return { days: [...days].sort(([a], [b]) => a.localeCompare(b)).map(([day, usage]) => ({ day, ...usage })), total };
  }
}
