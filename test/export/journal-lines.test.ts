/**
 * E1: an export's lines are each event exactly as stored, in JCS form, however its strings are
 * escaped, read from the store page by page, and the chain is still checked on every one.
 */
import { describe, expect, it } from 'vitest';
import { exportLines } from '../../main/export/journal-lines.js';
import { hashEvent } from '../../main/store/chain.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

/** Strings JSON escapes in every way it can: quotes, backslashes, controls, U+2028, astral characters, non-ASCII. */
const AWKWARD = ['"quoted" \\ back\\slash', 'tab\there\nnewline\u0000nul\u001f', 'line\u2028separator\u2029', 'emoji 😀 日本語 é', '</script><!--'];

function stored(events: number) {
  const { core, store, conversation } = seedConversation(tempDir());
  store.journal.appendMany(
    conversation.id,
    Array.from({ length: events }, (_, index) => ({ type: 'assistant_text', payload: { text: AWKWARD[index % AWKWARD.length]! }, runId: index % 2 === 0 ? null : `run "${index}" 😀` })),
  );
  return { core, store, conversationId: conversation.id };
}

describe('the lines of an export (E1)', () => {
  it('test_each_line_is_the_jcs_form_of_the_event_as_stored_across_pages_of_the_store', () => {
    // More events than one page of the store's reads (256), so the pages meet in the middle.
    const { core, store, conversationId } = stored(600);
    try {
      const head = store.journal.head(conversationId);
      const lines = [...exportLines(conversationId, head, store.journal.stored(conversationId, head.seq), () => undefined)];
      expect(lines.map(({ event }) => event.seq)).toEqual(Array.from({ length: 600 }, (_, index) => index + 1));
      for (const { line, event } of lines) {
        // JSON.stringify of the members in RFC 8785 order is their JCS form.
        const expected = { conversationId, createdAt: event.created_at, hash: event.hash, payload: event.payload, prevHash: event.prev_hash, runId: event.run_id, seq: event.seq, type: event.type };
        expect(line).toBe(`${JSON.stringify(expected)}\n`);
        expect(hashEvent(event.prev_hash, conversationId, event.seq, event.run_id, event.type, event.payload, event.created_at)).toBe(event.hash);
      }
    } finally {
      core.close();
    }
  });

  it('test_a_stored_event_holding_a_lone_surrogate_is_not_exported', () => {
    const { core, store, conversationId } = stored(3);
    try {
      // A payload JCS cannot say (a lone surrogate), written behind the journal's back with its old hash.
      store.db.prepare('UPDATE events SET payload = ? WHERE conversation_id = ? AND seq = 2').run('{"text":"\ud800"}', conversationId);
      const head = store.journal.head(conversationId);
      expect(() => [...exportLines(conversationId, head, store.journal.stored(conversationId, head.seq), () => undefined)]).toThrow(/event 2 was altered/);
    } finally {
      core.close();
    }
  });
});
