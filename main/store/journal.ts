import type { Database, Statement } from 'better-sqlite3';
import { WardError } from '../base/errors.js';
import { GENESIS_HASH, hashEvent } from './chain.js';
import { checkpointer } from './checkpointer.js';
import { indexer, searchableText, SearchKeys } from './search.js';

export { GENESIS_HASH };
/** A bigger payload belongs in a file, not the journal; producers truncate before this. */
export const MAX_EVENT_PAYLOAD_BYTES = 1024 * 1024;

export interface EventInput {
  readonly type: string;
  readonly payload: unknown;
  readonly runId?: string | null;
}

export interface JournalEvent {
  readonly conversationId: string;
  readonly seq: number;
  readonly runId: string | null;
  readonly type: string;
  readonly payload: unknown;
  readonly createdAt: string;
  readonly hash: string;
}

export type VerifyResult =
  | { readonly ok: true; readonly count: number }
  | { readonly ok: false; readonly count: number; readonly firstBadSeq: number; readonly reason: string };

export type EventListener = (event: JournalEvent) => void;

/**
 * How soon after a burst of appends the WAL is checkpointed. SQLite's automatic checkpoint runs
 * inside a commit and stalls that commit (and so the live stream) for milliseconds; small
 * checkpoints on a worker thread (./checkpointer.ts) keep the stream's tail latency low.
 * database.ts keeps a large automatic checkpoint as the backstop for writes that never pause.
 */
const CHECKPOINT_AFTER_MS = 250;

/** An event as stored: its payload is the JSON text the chain hashes. */
export interface StoredEvent {
  readonly seq: number;
  readonly run_id: string | null;
  readonly type: string;
  readonly payload: string;
  readonly created_at: string;
  readonly prev_hash: string;
  readonly hash: string;
}

/** seq, run_id, type, payload, created_at, hash */
type PageRow = [number, string | null, string, string, string, string];
/** seq, run_id, type, payload, created_at, prev_hash, hash */
type StoredRow = [number, string | null, string, string, string, string, string];
/** Events per read of `stored`: few enough that a page of the largest payloads (1 MiB each) still fits in memory. */
const STORED_PAGE_EVENTS = 256;

interface Subscriber {
  cursor: number;
  readonly listener: EventListener;
}

/**
 * The append-only, hash-chained event log of one namespace (J1, J2).
 * Appends are IMMEDIATE transactions, so concurrent writers (threads or processes) serialize
 * on SQLite's write lock and the per-conversation sequence never has gaps or duplicates.
 * Listeners are told only after commit: what anyone saw is on disk.
 */
export class Journal {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private checkpointTimer: NodeJS.Timeout | undefined;
  private readonly selectHead: Statement<[string], { last_seq: number; last_hash: string }>;
  private readonly insertEvent: Statement<[string, number, string | null, string, string, string, string, string]>;
  private readonly updateHead: Statement<[number, string, string]>;
  /** Prepared on first use: a read-only store of an older schema has no search index. */
  private search: { readonly keys: SearchKeys; readonly index: ReturnType<typeof indexer> } | undefined;
  /** Raw rows (arrays, not objects): replay reads up to 100,000 events at a time. */
  private readonly selectPage: Statement<[string, number, number], PageRow>;
  private readonly selectStored: Statement<[string, number, number], StoredRow>;
  private readonly appendTransaction: (conversationId: string, inputs: readonly EventInput[]) => JournalEvent[];

  constructor(private readonly db: Database, private readonly now: () => Date = () => new Date()) {
    this.selectHead = db.prepare('SELECT last_seq, last_hash FROM conversations WHERE id = ?');
    this.insertEvent = db.prepare(
      'INSERT INTO events (conversation_id, seq, run_id, type, payload, created_at, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.updateHead = db.prepare('UPDATE conversations SET last_seq = ?, last_hash = ? WHERE id = ?');
    this.selectPage = db
      .prepare<[string, number, number], PageRow>('SELECT seq, run_id, type, payload, created_at, hash FROM events WHERE conversation_id = ? AND seq > ? ORDER BY seq LIMIT ?')
      .raw(true);
    this.selectStored = db
      .prepare<[string, number, number], StoredRow>('SELECT seq, run_id, type, payload, created_at, prev_hash, hash FROM events WHERE conversation_id = ? AND seq > ? AND seq <= ? ORDER BY seq')
      .raw(true);
    const transaction = db.transaction((conversationId: string, inputs: readonly EventInput[]) => this.appendLocked(conversationId, inputs));
    this.appendTransaction = (conversationId, inputs) => transaction.immediate(conversationId, inputs);
  }

  append(conversationId: string, input: EventInput): JournalEvent {
    return this.appendMany(conversationId, [input])[0]!;
  }

  /** Appends a batch in one transaction: the unit of durability and of throughput. */
  appendMany(conversationId: string, inputs: readonly EventInput[]): JournalEvent[] {
    if (inputs.length === 0) return [];
    const events = this.appendTransaction(conversationId, inputs);
    this.notify(conversationId, events);
    this.scheduleCheckpoint();
    return events;
  }

  private scheduleCheckpoint(): void {
    if (this.checkpointTimer !== undefined) return;
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = undefined;
      if (!this.db.open) return;
      // PASSIVE never waits for readers or writers; a busy database just checkpoints later.
      if (!checkpointer.request(this.db.name)) this.db.pragma('wal_checkpoint(PASSIVE)');
    }, CHECKPOINT_AFTER_MS);
    this.checkpointTimer.unref();
  }

  /** Stops background work; called before the database closes. */
  dispose(): void {
    clearTimeout(this.checkpointTimer);
    this.checkpointTimer = undefined;
    checkpointer.release(this.db.name);
  }

  private appendLocked(conversationId: string, inputs: readonly EventInput[]): JournalEvent[] {
    const head = this.selectHead.get(conversationId);
    if (head === undefined) throw new WardError('not_found', `no conversation ${conversationId}`);
    let seq = head.last_seq;
    let prevHash = head.last_hash;
    const createdAt = this.now().toISOString();
    const events: JournalEvent[] = [];
    let searchKey: number | undefined;
    for (const input of inputs) {
      const payload = JSON.stringify(input.payload ?? null);
      // A UTF-16 unit is at most 3 UTF-8 bytes: most payloads need no byte count.
      if (payload.length * 3 > MAX_EVENT_PAYLOAD_BYTES && Buffer.byteLength(payload) > MAX_EVENT_PAYLOAD_BYTES) {
        throw new WardError('usage', `event ${input.type} payload exceeds ${MAX_EVENT_PAYLOAD_BYTES} bytes`);
      }
      seq += 1;
      const runId = input.runId ?? null;
      const hash = hashEvent(prevHash, conversationId, seq, runId, input.type, payload, createdAt);
      this.insertEvent.run(conversationId, seq, runId, input.type, payload, createdAt, prevHash, hash);
      // E4: the search index changes in the same transaction as the journal.
      const searchable = searchableText(input.type, input.payload);
      if (searchable !== null) {
        this.search ??= { keys: new SearchKeys(this.db), index: indexer(this.db) };
        searchKey ??= this.search.keys.keyOf(conversationId);
        this.search.index(searchKey, seq, searchable);
      }
      events.push({ conversationId, seq, runId, type: input.type, payload: input.payload ?? null, createdAt, hash });
      prevHash = hash;
    }
    this.updateHead.run(seq, prevHash, conversationId);
    return events;
  }

  /** Events after `afterSeq`, in order, read in pages so memory stays bounded. */
  *read(conversationId: string, afterSeq = 0, pageSize = 2_000): Generator<JournalEvent> {
    let cursor = afterSeq;
    for (;;) {
      const rows = this.selectPage.all(conversationId, cursor, pageSize);
      for (const [seq, runId, type, payload, createdAt, hash] of rows) {
        yield { conversationId, seq, runId, type, payload: JSON.parse(payload) as unknown, createdAt, hash };
      }
      if (rows.length < pageSize) return;
      cursor = rows[rows.length - 1]![0];
    }
  }

  /** The seq of a run's first event, or undefined when it has none yet. */
  firstSeqOfRun(conversationId: string, runId: string): number | undefined {
    const row = this.db.prepare<[string, string], { seq: number | null }>('SELECT min(seq) AS seq FROM events WHERE conversation_id = ? AND run_id = ?').get(conversationId, runId);
    return row?.seq ?? undefined;
  }

  /** The newest event of one of `types`, or undefined when there is none. */
  latest(conversationId: string, types: readonly string[]): JournalEvent | undefined {
    const row = this.db
      .prepare<string[], [number, string | null, string, string, string, string]>(
        `SELECT seq, run_id, type, payload, created_at, hash FROM events WHERE conversation_id = ? AND type IN (${types.map(() => '?').join(', ')}) ORDER BY seq DESC LIMIT 1`,
      )
      .raw()
      .get(conversationId, ...types);
    if (row === undefined) return undefined;
    const [seq, runId, type, payload, createdAt, hash] = row;
    return { conversationId, seq, runId, type, payload: JSON.parse(payload) as unknown, createdAt, hash };
  }

  /** When the newest event was written, or undefined for an empty journal. */
  lastEventAt(conversationId: string): string | undefined {
    return this.db.prepare<[string], { created_at: string }>('SELECT created_at FROM events WHERE conversation_id = ? ORDER BY seq DESC LIMIT 1').get(conversationId)?.created_at;
  }

  lastSeq(conversationId: string): number {
    const head = this.selectHead.get(conversationId);
    if (head === undefined) throw new WardError('not_found', `no conversation ${conversationId}`);
    return head.last_seq;
  }

  /**
   * Replays from a cursor, then follows live appends made through this Journal.
   * Delivery is gap-free and in order; returns the unsubscribe function.
   */
  subscribe(conversationId: string, afterSeq: number, listener: EventListener): () => void {
    const subscriber: Subscriber = { cursor: afterSeq, listener };
    let set = this.subscribers.get(conversationId);
    if (set === undefined) {
      set = new Set();
      this.subscribers.set(conversationId, set);
    }
    set.add(subscriber);
    this.catchUp(conversationId, subscriber);
    return () => {
      set.delete(subscriber);
      if (set.size === 0) this.subscribers.delete(conversationId);
    };
  }

  private catchUp(conversationId: string, subscriber: Subscriber): void {
    for (const event of this.read(conversationId, subscriber.cursor)) this.deliver(subscriber, event);
  }

  private deliver(subscriber: Subscriber, event: JournalEvent): void {
    subscriber.cursor = event.seq;
    try {
      subscriber.listener(event);
    } catch {
      // A failing listener must not break the producer or other subscribers.
    }
  }

  private notify(conversationId: string, events: readonly JournalEvent[]): void {
    const set = this.subscribers.get(conversationId);
    if (set === undefined) return;
    const first = events[0]!.seq;
    for (const subscriber of [...set]) {
      if (subscriber.cursor === first - 1) for (const event of events) this.deliver(subscriber, event);
      else if (subscriber.cursor < first) this.catchUp(conversationId, subscriber); // appended by another process meanwhile
    }
  }

  /** The head the conversation records: its last sequence number and that event's hash. */
  head(conversationId: string): { readonly seq: number; readonly hash: string } {
    const head = this.selectHead.get(conversationId);
    if (head === undefined) throw new WardError('not_found', `no conversation ${conversationId}`);
    return { seq: head.last_seq, hash: head.last_hash };
  }

  /**
   * Events as stored, up to `lastSeq`, in order (exports hash and copy these exact bytes). The
   * query starts with the first read, and ends when the reader stops: an iterator nobody reads
   * does not hold the connection.
   */
  *stored(conversationId: string, lastSeq: number): Generator<StoredEvent> {
    // Pages of raw rows: about twice as fast as iterating row objects, and no statement is held between pages.
    for (let after = 0; after < lastSeq; ) {
      const rows = this.selectStored.all(conversationId, after, Math.min(lastSeq, after + STORED_PAGE_EVENTS));
      if (rows.length === 0) return;
      for (const [seq, run_id, type, payload, created_at, prev_hash, hash] of rows) yield { seq, run_id, type, payload, created_at, prev_hash, hash };
      after = rows.at(-1)![0];
    }
  }

  /** J2: recomputes the chain and names the first event that was altered, removed or reordered. */
  verify(conversationId: string): VerifyResult {
    const head = this.selectHead.get(conversationId);
    if (head === undefined) throw new WardError('not_found', `no conversation ${conversationId}`);
    let expected = 1;
    let prevHash = GENESIS_HASH;
    for (const row of this.stored(conversationId, Number.MAX_SAFE_INTEGER)) {
      const bad = (reason: string): VerifyResult => ({ ok: false, count: expected - 1, firstBadSeq: expected, reason });
      if (row.seq !== expected) return bad(`event ${expected} is missing`);
      if (row.prev_hash !== prevHash) return bad(`event ${expected} does not follow event ${expected - 1} (chain broken)`);
      const recomputed = hashEvent(prevHash, conversationId, row.seq, row.run_id, row.type, row.payload, row.created_at);
      if (recomputed !== row.hash) return bad(`event ${expected} was altered`);
      prevHash = row.hash;
      expected += 1;
    }
    const count = expected - 1;
    if (head.last_seq !== count) {
      return { ok: false, count, firstBadSeq: expected, reason: `event ${expected} is missing (the journal recorded ${head.last_seq} events)` };
    }
    if (head.last_hash !== prevHash) {
      return { ok: false, count, firstBadSeq: count, reason: `event ${count} does not match the journal head` };
    }
    return { ok: true, count };
  }
}
