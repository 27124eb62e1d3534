import { describe, expect, it } from 'vitest';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

describe('the journal as the audit outbox', () => {
  it('test_pending_spans_conversations_in_order_and_the_cursor_only_moves_forward_across_a_reopen', () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    const other = store.conversations.create({ agentId: conversation.agentId, agentVersion: 1, title: 'second' });
    store.journal.appendMany(conversation.id, [1, 2, 3].map((i) => ({ type: 'note', payload: { i } })));
    store.journal.appendMany(other.id, [1, 2].map((i) => ({ type: 'note', payload: { i } })));
    expect(store.audit.backlog()).toMatchObject({ count: 5, oldest: expect.any(String) });
    const first = store.audit.pending(4);
    expect(first.map((event) => [event.conversationId, event.seq])).toEqual([
      [conversation.id, 1], [conversation.id, 2], [conversation.id, 3], [other.id, 1],
    ]);
    store.audit.advance(first, new Date());
    store.audit.advance(first.slice(0, 1), new Date());
    expect(store.audit.pending(10).map((event) => [event.conversationId, event.seq])).toEqual([[other.id, 2]]);
    core.close();
    const reopened = seedConversation(home);
    expect(reopened.store.audit.backlog().count).toBe(1);
    reopened.store.audit.advance(reopened.store.audit.pending(10), new Date());
    expect(reopened.store.audit.backlog()).toEqual({ count: 0, oldest: null });
    reopened.core.close();
  });
});
