import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { JournalEvent } from '../../main/store/journal.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

describe('journal', () => {
  it('test_numbers_events_per_conversation_from_1_without_gaps_in_append_order', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const other = store.conversations.create({ agentId: conversation.agentId, agentVersion: 1, title: 'second' });
    store.journal.append(conversation.id, { type: 'note', payload: { text: 'a' } });
    store.journal.append(other.id, { type: 'note', payload: { text: 'x' } });
    store.journal.appendMany(conversation.id, [
      { type: 'note', payload: { text: 'b' } },
      { type: 'note', payload: { text: 'c' } },
    ]);
    const events = [...store.journal.read(conversation.id)];
    expect(events.map((e) => [e.seq, (e.payload as { text: string }).text])).toEqual([
      [1, 'a'],
      [2, 'b'],
      [3, 'c'],
    ]);
    expect([...store.journal.read(other.id)].map((e) => e.seq)).toEqual([1]);
    core.close();
  });

  it('test_replays_from_a_cursor_then_follows_live_appends_in_order_and_without_duplicates', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    for (let i = 1; i <= 5; i++) store.journal.append(conversation.id, { type: 'note', payload: { i } });
    const seen: number[] = [];
    const unsubscribe = store.journal.subscribe(conversation.id, 2, (event: JournalEvent) => seen.push(event.seq));
    expect(seen).toEqual([3, 4, 5]);
    store.journal.appendMany(conversation.id, [{ type: 'note', payload: {} }, { type: 'note', payload: {} }]);
    expect(seen).toEqual([3, 4, 5, 6, 7]);
    unsubscribe();
    store.journal.append(conversation.id, { type: 'note', payload: {} });
    expect(seen).toEqual([3, 4, 5, 6, 7]);
    core.close();
  });

  it('test_a_throwing_subscriber_neither_loses_the_event_for_others_nor_fails_the_append', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const seen: number[] = [];
    store.journal.subscribe(conversation.id, 0, () => {
      throw new Error('listener bug');
    });
    store.journal.subscribe(conversation.id, 0, (event) => seen.push(event.seq));
    expect(store.journal.append(conversation.id, { type: 'note', payload: {} }).seq).toBe(1);
    expect(seen).toEqual([1]);
    core.close();
  });

  it('test_refuses_an_event_for_a_conversation_that_does_not_exist', () => {
    const { core, store } = seedConversation(tempDir());
    expect(() => store.journal.append('00000000-0000-0000-0000-000000000000', { type: 'note', payload: {} })).toThrow(/no conversation/);
    core.close();
  });

  describe('verify (J2)', () => {
    function fiveEvents() {
      const seeded = seedConversation(tempDir());
      for (let i = 1; i <= 5; i++) seeded.store.journal.append(seeded.conversation.id, { type: 'note', payload: { i } });
      return seeded;
    }

    it('test_accepts_an_untouched_chain', () => {
      const { core, store, conversation } = fiveEvents();
      expect(store.journal.verify(conversation.id)).toEqual({ ok: true, count: 5 });
      core.close();
    });

    it('test_names_an_altered_payload', () => {
      const { core, store, conversation } = fiveEvents();
      store.db.prepare("UPDATE events SET payload = '{\"i\":99}' WHERE seq = 3").run();
      expect(store.journal.verify(conversation.id)).toMatchObject({ ok: false, firstBadSeq: 3, reason: 'event 3 was altered' });
      core.close();
    });

    it('test_names_a_deleted_event_in_the_middle', () => {
      const { core, store, conversation } = fiveEvents();
      store.db.prepare('DELETE FROM events WHERE seq = 2').run();
      expect(store.journal.verify(conversation.id)).toMatchObject({ ok: false, firstBadSeq: 2 });
      core.close();
    });

    it('test_names_a_deleted_last_event', () => {
      const { core, store, conversation } = fiveEvents();
      store.db.prepare('DELETE FROM events WHERE seq = 5').run();
      expect(store.journal.verify(conversation.id)).toMatchObject({ ok: false, firstBadSeq: 5 });
      core.close();
    });

    it('test_names_the_first_of_two_reordered_events', () => {
      const { core, store, conversation } = fiveEvents();
      store.db.transaction(() => {
        store.db.prepare('UPDATE events SET seq = 100 WHERE seq = 2').run();
        store.db.prepare('UPDATE events SET seq = 2 WHERE seq = 4').run();
        store.db.prepare('UPDATE events SET seq = 4 WHERE seq = 100').run();
      })();
      expect(store.journal.verify(conversation.id)).toMatchObject({ ok: false, firstBadSeq: 2 });
      core.close();
    });
  });

  it('test_a_notified_event_is_already_committed_readable_from_another_connection (J1)', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const other = new BetterSqlite3(store.file, { readonly: true });
    const seenElsewhere: Array<string | undefined> = [];
    store.journal.subscribe(conversation.id, 0, (event) => {
      const row = other.prepare<[string, number], { type: string }>('SELECT type FROM events WHERE conversation_id = ? AND seq = ?').get(conversation.id, event.seq);
      seenElsewhere.push(row?.type);
    });
    store.journal.appendMany(conversation.id, [
      { type: 'note', payload: { text: 'a' } },
      { type: 'other', payload: { text: 'b' } },
    ]);
    expect(seenElsewhere).toEqual(['note', 'other']);
    other.close();
    core.close();
  });

  it('test_a_failed_commit_notifies_nobody_and_uses_no_sequence_number (J1)', () => {
    const { core, store, conversation } = seedConversation(tempDir());
    const seen: number[] = [];
    store.journal.subscribe(conversation.id, 0, (event) => seen.push(event.seq));
    // The second event cannot be stored (a BigInt is not JSON): the whole batch rolls back.
    expect(() => store.journal.appendMany(conversation.id, [{ type: 'note', payload: {} }, { type: 'note', payload: { n: 1n } }])).toThrow();
    expect(seen).toEqual([]);
    expect(store.journal.lastSeq(conversation.id)).toBe(0);
    store.journal.append(conversation.id, { type: 'note', payload: {} });
    expect(seen).toEqual([1]);
    core.close();
  });
});
