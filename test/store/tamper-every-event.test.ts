/**
 * J2, E4: an edit of any event, whatever its type, is named — by `ward verify`'s chain check and
 * by a bundle's. The types come from the journal schema, so a type added later is covered too.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyBundle } from '../../main/export/bundle.js';
import { writeBundle } from '../../main/export/bundle-writer.js';
import { generateSigningKey, loadSigningKey } from '../../main/export/signing.js';
import type { Conversation } from '../../main/store/conversations.js';
import type { NamespaceStore } from '../../main/store/namespace-store.js';
import { withLines } from '../export/support.js';
import { hostileEvents } from '../support/hostile.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

/** One well-formed event of every type, with this text in each of its string fields. */
const EVENTS = [...new Map(hostileEvents('as recorded').map((event) => [event.type, event])).values()];

/** A change to a stored payload that keeps it JSON: a string, number or boolean in it becomes another. */
function forge(payload: string): string {
  if (payload.includes('as recorded')) return payload.replace('as recorded', 'as forged');
  const edited = payload.replace(/\d+|true|false/, (value) => (value === 'true' ? 'false' : value === 'false' ? 'true' : String(Number(value) + 1)));
  return edited !== payload ? edited : payload.replace(/^\{/, '{"forged":1,');
}

/** A conversation holding every event type once, in schema order (event N+1 is EVENTS[N]); closed after `use`. */
async function withEveryType(use: (made: { store: NamespaceStore; conversation: Conversation; dir: string }) => Promise<void> | void): Promise<void> {
  const dir = tempDir('ward-tamper-');
  const { core, store, conversation } = seedConversation(path.join(dir, 'home'));
  try {
    store.journal.appendMany(conversation.id, EVENTS);
    await use({ store, conversation, dir });
  } finally {
    core.close();
  }
}

describe('an edit of any event type is named', () => {
  it('test_the_journal_holds_one_event_of_every_type_in_the_schema', async () => {
    await withEveryType(({ store, conversation }) => {
    expect([...store.journal.read(conversation.id)].map((event) => event.type)).toEqual(EVENTS.map((event) => event.type));
    expect(EVENTS.map((event) => event.type)).toContain('permission_decision');
    });
  });

  it.each(EVENTS.map((event, index) => [event.type, index + 1] as const))('test_an_edited_%s_event_fails_the_chain_check_by_its_number', async (_type, seq) => {
    await withEveryType(({ store, conversation }) => {
    const { payload } = store.db.prepare<[string, number], { payload: string }>('SELECT payload FROM events WHERE conversation_id = ? AND seq = ?').get(conversation.id, seq)!;
    const update = store.db.prepare('UPDATE events SET payload = ? WHERE conversation_id = ? AND seq = ?');
    update.run(forge(payload), conversation.id, seq);
    try {
      expect(store.journal.verify(conversation.id)).toEqual({ ok: false, count: seq - 1, firstBadSeq: seq, reason: `event ${seq} was altered` });
    } finally {
      update.run(payload, conversation.id, seq);
    }
    expect(store.journal.verify(conversation.id)).toEqual({ ok: true, count: EVENTS.length });
    });
  });

  it.each(EVENTS.map((event, index) => [event.type, index + 1] as const))('test_an_edited_%s_event_in_a_bundle_is_named_by_its_number', async (_type, seq) => {
    await withEveryType(async ({ store, conversation, dir }) => {
    const key = loadSigningKey(generateSigningKey());
    const file = path.join(dir, `every-type-${seq}.wardbundle`);
    const head = store.journal.head(conversation.id);
    const predicate = { conversationId: conversation.id, title: conversation.title, namespaceHash: store.namespace.hash, agent: { name: 'helper', version: 1 }, cliVersion: '2.1.328', wardVersion: '0.1.0', exportedAt: new Date().toISOString(), uncertainRuns: [], anchoredSeq: 0 };
    writeBundle(file, { conversationId: conversation.id, head, events: store.journal.stored(conversation.id, head.seq), check: () => undefined, predicate }, key, 'readme\n');
    const bundle = { file, key, conversationId: conversation.id, dir };
    expect(await verifyBundle(file)).toMatchObject({ ok: true, events: EVENTS.length });
    const edited = withLines(bundle, (lines) => lines.map((line, index) => {
      if (index !== seq - 1) return line;
      const parsed = JSON.parse(line) as { payload: string };
      return JSON.stringify({ ...parsed, payload: forge(parsed.payload) });
    }), `edited-${seq}.wardbundle`);
    expect(await verifyBundle(edited)).toMatchObject({ ok: false, firstBadSeq: seq, signedEvents: EVENTS.length - 1, problems: [`event ${seq} is not what was signed`, 'journal.jsonl is not the file the statement commits to (its SHA-256 differs)'] });
    });
  });
});
