/**
 * journal.jsonl: one event per line, exactly as stored, so anyone can recompute the hash chain
 * (J2) from the file alone. `payload` is the stored JSON text (a string): re-serializing a parsed
 * payload could reorder keys and break the hash.
 */
import { WardError } from '../base/errors.js';
import { canonicalString } from '../base/jcs.js';
import { GENESIS_HASH, hashCanonicalEvent, hashEvent } from '../store/chain.js';
import type { StoredEvent } from '../store/journal.js';

export interface JournalLine {
  readonly conversationId: string;
  readonly seq: number;
  readonly runId: string | null;
  readonly type: string;
  readonly createdAt: string;
  readonly payload: string;
  readonly prevHash: string;
  readonly hash: string;
}

const FIELDS = ['conversationId', 'seq', 'runId', 'type', 'createdAt', 'payload', 'prevHash', 'hash'] as const;

/**
 * A line's fields in RFC 8785 order, so JSON.stringify writes the line's JCS form: its strings are
 * the ones the event hash has just canonicalized (no lone surrogates) and its one number a whole seq.
 */
function toLine(conversationId: string, row: StoredEvent): JournalLine {
  return { conversationId, createdAt: row.created_at, hash: row.hash, payload: row.payload, prevHash: row.prev_hash, runId: row.run_id, seq: row.seq, type: row.type };
}

/**
 * An event's line (its JCS form, as JSON.stringify writes `toLine`'s object) and the JCS text of
 * the array its hash is over, from one escaping of each string: the payload, most of a line, is
 * escaped once, not once for the hash and again for the line. `canonical` is null when a string
 * holds a lone surrogate, which JCS cannot say (so the event cannot match its hash).
 */
function encodeEvent(conversationId: string, conversation: string | null, row: StoredEvent): { readonly canonical: string | null; readonly line: string } {
  const payload = canonicalString(row.payload);
  const type = canonicalString(row.type);
  const createdAt = canonicalString(row.created_at);
  const runId = row.run_id === null ? 'null' : canonicalString(row.run_id);
  if (conversation === null || payload === null || type === null || createdAt === null || runId === null) return { canonical: null, line: `${JSON.stringify(toLine(conversationId, row))}\n` };
  const canonical = `[${conversation},${row.seq},${runId},${type},${payload},${createdAt}]`;
  return { canonical, line: `{"conversationId":${conversation},"createdAt":${createdAt},"hash":${JSON.stringify(row.hash)},"payload":${payload},"prevHash":${JSON.stringify(row.prev_hash)},"runId":${runId},"seq":${row.seq},"type":${type}}\n` };
}

function shapeProblem(value: unknown): string | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'not a JSON object';
  const fields = value as Record<string, unknown>;
  const extra = Object.keys(fields).find((key) => !(FIELDS as readonly string[]).includes(key));
  if (extra !== undefined) return `unexpected field ${JSON.stringify(extra.slice(0, 40))}`;
  for (const key of ['conversationId', 'type', 'createdAt', 'payload', 'prevHash', 'hash'] as const) if (typeof fields[key] !== 'string') return `${key} is not a string`;
  if (!Number.isSafeInteger(fields.seq)) return 'seq is not a whole number';
  if (fields.runId !== null && typeof fields.runId !== 'string') return 'runId is neither a string nor null';
  return null;
}

/** Line `number` of journal.jsonl as an event, or what is wrong with it. */
export function parseLine(text: string, number: number): JournalLine | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `line ${number} is not JSON (event ${number} is unreadable)`;
  }
  const shape = shapeProblem(value);
  return shape === null ? (value as JournalLine) : `line ${number} is not a journal event (${shape})`;
}

/** The first problem found, naming the event it makes bad. */
export interface ChainProblem {
  readonly firstBadSeq: number;
  readonly reason: string;
}

/** The hash of the event's content after `prevHash`; null when it has none (a string JSON cannot hold). */
export function contentHash(prevHash: string, event: JournalLine): string | null {
  try {
    return hashEvent(prevHash, event.conversationId, event.seq, event.runId, event.type, event.payload, event.createdAt);
  } catch {
    return null;
  }
}

/** Why an event does not continue the chain where event `expected` should be, or null when it does. */
function linkProblem(expected: number, prevHash: string, conversationId: string, event: JournalLine, hashOf: () => string | null): string | null {
  if (event.conversationId !== conversationId) return `event ${expected} belongs to another conversation`;
  if (event.seq > expected) return `event ${expected} is missing`;
  if (event.seq !== expected) return `event ${expected} is out of order (line ${expected} holds event ${event.seq})`;
  if (event.prevHash !== prevHash) return `event ${expected} does not follow event ${expected - 1} (chain broken)`;
  if (hashOf() !== event.hash) return `event ${expected} was altered`;
  return null;
}

/**
 * Checks lines one at a time against the chain, as `Journal.verify` does rows: the first event
 * altered, removed, reordered or foreign is named; later lines are only counted.
 */
export class ChainChecker {
  private count = 0;
  private prevHash = GENESIS_HASH;
  problem: ChainProblem | null = null;

  constructor(private readonly conversationId: string) {}

  /** Checks one line's text; returns the parsed line while the chain holds. */
  push(text: string): JournalLine | null {
    if (this.problem !== null) return this.fail('');
    const parsed = parseLine(text, this.count + 1);
    return typeof parsed === 'string' ? this.fail(parsed) : this.pushEvent(parsed);
  }

  /**
   * Checks one event already in hand (an export checks the rows it writes, without parsing its own
   * lines); `hashOf` gives its content hash when the caller has the canonical text at hand.
   */
  pushEvent(event: JournalLine, hashOf = () => contentHash(event.prevHash, event)): JournalLine | null {
    this.count += 1;
    if (this.problem !== null) return null;
    const problem = linkProblem(this.count, this.prevHash, this.conversationId, event, hashOf);
    if (problem !== null) {
      this.problem = { firstBadSeq: this.count, reason: problem };
      return null;
    }
    this.prevHash = event.hash;
    return event;
  }

  private fail(reason: string): null {
    this.count += 1;
    this.problem ??= { firstBadSeq: this.count, reason };
    return null;
  }

  get events(): number {
    return this.count;
  }

  /** The hash of the last event checked (the head, when no problem was found). */
  get head(): string {
    return this.prevHash;
  }
}

function notExported(conversationId: string, why: string): WardError {
  return new WardError('journal_invalid', `the journal of conversation ${conversationId} fails verification (${why}); a broken journal is not exported: see "ward verify"`, {
    desktop: `The journal of conversation ${conversationId} fails verification (${why}); a broken journal is not exported.`,
  });
}

/**
 * The lines of an export, from the stored events up to the head the export stops at: each one
 * checked against the chain (a broken journal is never exported, let alone signed) and passed
 * to `check` (E3) before anyone writes it.
 */
export function* exportLines(
  conversationId: string,
  head: { readonly seq: number; readonly hash: string },
  events: Iterable<StoredEvent>,
  check: (line: string, event: StoredEvent) => void,
): Generator<{ readonly line: string; readonly event: StoredEvent }> {
  const chain = new ChainChecker(conversationId);
  const conversation = canonicalString(conversationId);
  for (const event of events) {
    const { canonical, line } = encodeEvent(conversationId, conversation, event);
    chain.pushEvent(toLine(conversationId, event), () => (canonical === null ? null : hashCanonicalEvent(event.prev_hash, canonical)));
    if (chain.problem !== null) throw notExported(conversationId, chain.problem.reason);
    check(line, event);
    yield { line, event };
  }
  if (chain.events !== head.seq || chain.head !== head.hash) throw notExported(conversationId, `${chain.events} events end in ${chain.head.slice(0, 12)}…, not the ${head.seq} its head records`);
}
