import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DataFolder } from '../main/store/data-folder.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { round, timeMs } from './stats.js';

const APPEND_EVENTS = 100_000;
const BATCH = 1_000;
const REPLAY_EVENTS = 100_000;
const payload = (i: number) => ({ text: `assistant says something moderately long, number ${i}`, tokens: i % 97 });

function withStore<T>(fn: (store: ReturnType<DataFolder['store']>, conversationId: string) => T): T {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-'));
  const core = new DataFolder(home);
  try {
    const store = core.store(parseNamespace('bench'));
    const agent = store.agents.publish('bench', { instructions: '' });
    const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'bench' });
    return fn(store, conversation.id);
  } finally {
    core.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/**
 * Journal append: batches of 1,000 events per transaction (what the run loop does when a burst
 * of stream-json lines arrives), against a baseline of the same rows inserted into an identical
 * table by raw better-sqlite3 without hashing, in the same run.
 */
function benchAppend() {
  const appendAll = (type: string) =>
    withStore((store, id) =>
      timeMs(() => {
        for (let start = 0; start < APPEND_EVENTS; start += BATCH) {
          store.journal.appendMany(id, Array.from({ length: BATCH }, (_, k) => ({ type, payload: payload(start + k) })));
        }
      }),
    );
  const journalMs = appendAll('assistant_text');
  // The same events under a type the search index skips (streamed deltas): what indexing costs, in this run.
  const unindexedMs = appendAll('assistant_delta');
  const singleMs = withStore((store, id) => timeMs(() => {
    for (let i = 0; i < 5_000; i++) store.journal.append(id, { type: 'assistant_text', payload: payload(i) });
  }));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-raw-'));
  const db = new BetterSqlite3(path.join(dir, 'raw.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE events (conversation_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, payload TEXT NOT NULL, PRIMARY KEY (conversation_id, seq)) STRICT, WITHOUT ROWID');
  const insert = db.prepare('INSERT INTO events VALUES (?, ?, ?, ?)');
  const batch = db.transaction((start: number) => {
    for (let k = 0; k < BATCH; k++) insert.run('c', start + k + 1, 'assistant_text', JSON.stringify(payload(start + k)));
  });
  const rawMs = timeMs(() => {
    for (let start = 0; start < APPEND_EVENTS; start += BATCH) batch.immediate(start);
  });
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });

  const eventsPerSecond = APPEND_EVENTS / (journalMs / 1000);
  return {
    batching: `${BATCH} events per transaction`,
    events: APPEND_EVENTS,
    eventsPerSecond: Math.round(eventsPerSecond),
    baselineRawInsertPerSecond: Math.round(APPEND_EVENTS / (rawMs / 1000)),
    ratioToBaseline: round(rawMs / journalMs),
    unindexedEventsPerSecond: Math.round(APPEND_EVENTS / (unindexedMs / 1000)),
    indexedToUnindexed: round(unindexedMs / journalMs),
    oneTransactionPerEventPerSecond: Math.round(5_000 / (singleMs / 1000)),
    target: '>= 50000 events/s',
    pass: eventsPerSecond >= 50_000,
  };
}

/** Replay of 100,000 events from a cursor (events 50,001..150,000), against a raw SELECT of the same rows. */
function benchReplay() {
  return withStore((store, id) => {
    const cursor = 50_000;
    for (let start = 0; start < cursor + REPLAY_EVENTS; start += BATCH) {
      store.journal.appendMany(id, Array.from({ length: BATCH }, (_, k) => ({ type: 'assistant_text', payload: payload(start + k) })));
    }
    let replayed = 0;
    const replayMs = timeMs(() => {
      for (const event of store.journal.read(id, cursor)) if (event.seq > 0) replayed += 1;
    });
    const rawMs = timeMs(() => {
      store.db.prepare('SELECT seq, payload FROM events WHERE conversation_id = ? AND seq > ? ORDER BY seq').raw().all(id, cursor);
    });
    return {
      events: replayed,
      replayMs: round(replayMs, 1),
      baselineRawSelectMs: round(rawMs, 1),
      ratioToBaseline: round(replayMs / rawMs, 2),
      target: '<= 250 ms',
      pass: replayed === REPLAY_EVENTS && replayMs <= 250,
    };
  });
}

export async function benchJournal(): Promise<Record<string, unknown>> {
  return { append: benchAppend(), replay: benchReplay() };
}
