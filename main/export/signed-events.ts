/**
 * E4: the signed list of event hashes (events.sha256) and the journal's lines held against it, one
 * by one. Event n is what was signed when its content, hashed after the signed hash of event n-1,
 * gives the signed hash of event n: so an edited event is named even when whoever edited it
 * recomputed every hash after it, the events after it still match, and a line that holds another
 * signed event than its own is a reorder, not a loss.
 */
import { GENESIS_HASH } from '../store/chain.js';
import { contentHash, parseLine, type JournalLine } from './journal-lines.js';
import { EVENT_HASHES_FILE } from './statement.js';

const LINE_BYTES = 65;

/** The first line of `data` that does not end where a hash line ends (64 bytes and a newline), or null. */
function badLine(data: Buffer, events: number): number | null {
  for (let index = 0; index < events; index++) if (data[index * LINE_BYTES + 64] !== 10) return index + 1;
  return null;
}

/** The signed hashes, as the file holds them (65 bytes an event: 6.5 MB for 100,000). */
export class SignedEvents {
  private constructor(
    private readonly lines: Buffer,
    readonly count: number,
  ) {}

  /** Parses the list; a string says why it is not the list the statement describes. */
  static parse(data: Buffer, events: number, chainHead: string): SignedEvents | string {
    if (data.length !== events * LINE_BYTES) return `${EVENT_HASHES_FILE} holds ${data.length} bytes, not the ${events} hashes the statement commits to`;
    const bad = badLine(data, events);
    if (bad !== null) return `line ${bad} of ${EVENT_HASHES_FILE} is not a SHA-256 and a newline`;
    const list = new SignedEvents(data, events);
    if (events > 0 && list.hash(events) !== chainHead) return `the last hash of ${EVENT_HASHES_FILE} is not the statement's chain head`;
    return list;
  }

  /**
   * Whether line `seq` is 64 lowercase hex digits. Asked only of an event that did not match: a line
   * that is not hex can match no event (a hash is hex), so the list need not be scanned up front.
   */
  isHex(seq: number): boolean {
    return seq === 0 || /^[0-9a-f]{64}$/.test(this.hash(seq));
  }

  /** The signed hash of event `seq` (0: the genesis hash). */
  hash(seq: number): string {
    return seq === 0 ? GENESIS_HASH : this.lines.toString('latin1', (seq - 1) * LINE_BYTES, (seq - 1) * LINE_BYTES + 64);
  }
}

/** What a line is, held against the signed list: the signed event it is, or null; and the line as parsed (null: not an event). */
export interface LineMatch {
  readonly signedSeq: number | null;
  readonly line: JournalLine | null;
}

interface Problem {
  readonly seq: number;
  readonly reason: string;
}

/**
 * Holds each line against the list as it is read, and says afterwards what is not as signed:
 * altered, missing, reordered, repeated or appended events, each problem naming its event.
 */
export class EventMatcher {
  private lines = 0;
  private lastSeq = 0;
  /** 1 for each signed event a line holds: a byte an event, not a Set's tens. */
  private readonly seen: Uint8Array;
  private readonly problems: Problem[] = [];
  private reordered = false;
  private rechained = false;
  private lastSeqRead = -1;
  private lastHashRead = '';

  constructor(
    private readonly list: SignedEvents,
    private readonly conversationId: string,
  ) {
    this.seen = new Uint8Array(list.count + 1);
  }

  push(text: string): LineMatch {
    this.lines += 1;
    const line = this.lines;
    const parsed = parseLine(text, line);
    const event = typeof parsed === 'string' ? null : parsed;
    const claimed = event === null || !Number.isSafeInteger(event.seq) || event.seq < 1 ? line : event.seq;
    if (claimed > this.list.count) return this.unmatched(event, claimed, `event ${claimed} is not covered by the statement, which commits to ${this.list.count} events (events were appended)`);
    if (event === null) return this.unmatched(null, claimed, `event ${claimed} is not what was signed: ${parsed as string}`);
    // In order, an event's signed predecessor is the hash just read for the line before.
    const before = claimed - 1 === this.lastSeqRead ? this.lastHashRead : this.list.hash(claimed - 1);
    const after = this.list.hash(claimed);
    this.lastSeqRead = claimed;
    this.lastHashRead = after;
    if (event.conversationId !== this.conversationId || contentHash(before, event) !== after) {
      const notHex = [claimed - 1, claimed].find((seq) => !this.list.isHex(seq));
      if (notHex !== undefined) return this.unmatched(event, claimed, `event ${claimed} cannot be matched: line ${notHex} of ${EVENT_HASHES_FILE} is not a SHA-256 in hex`);
      return this.unmatched(event, claimed, `event ${claimed} is not what was signed${claimed === line ? '' : ` (line ${line} says it is event ${claimed})`}`);
    }
    if (this.seen[claimed] === 1) return this.unmatched(event, claimed, `event ${claimed} appears again at line ${line}`);
    this.seen[claimed] = 1;
    if (claimed < this.lastSeq && !this.reordered) {
      this.reordered = true;
      this.problems.push({ seq: claimed, reason: `the events were reordered: line ${line} holds event ${claimed}, after event ${this.lastSeq}` });
    }
    // The event is as signed, its line's chain is not: named, so a broken or rewritten chain has a first bad event.
    if ((event.prevHash !== before || event.hash !== after) && !this.rechained) {
      this.rechained = true;
      this.problems.push({ seq: claimed, reason: `event ${claimed} is as signed, but its line's prevHash or hash is not the signed one (the hash chain was broken or rewritten from there)` });
    }
    this.lastSeq = Math.max(this.lastSeq, claimed);
    return { signedSeq: claimed, line: event };
  }

  /** The problems found, the first bad event's first; signed events no line holds are missing, told as runs. */
  finish(): { firstBadSeq: number | null; problems: string[] } {
    const named = new Set(this.problems.map((problem) => problem.seq));
    const missing: Problem[] = [];
    let runStart = 0;
    for (let seq = 1; seq <= this.list.count + 1 && missing.length < 20; seq++) {
      const absent = seq <= this.list.count && this.seen[seq] !== 1 && !named.has(seq);
      if (absent && runStart === 0) runStart = seq;
      if (absent || runStart === 0) continue;
      missing.push({ seq: runStart, reason: runStart === seq - 1 ? `event ${runStart} is missing` : `events ${runStart} to ${seq - 1} are missing` });
      runStart = 0;
    }
    const all = [...this.problems, ...missing].sort((a, b) => a.seq - b.seq);
    const problems = all.slice(0, 20).map((problem) => problem.reason);
    if (this.lines !== this.list.count) problems.push(`the statement commits to ${this.list.count} events, the journal has ${this.lines} lines`);
    return { firstBadSeq: all[0]?.seq ?? null, problems };
  }

  get events(): number {
    return this.lines;
  }

  private unmatched(line: JournalLine | null, seq: number, reason: string): LineMatch {
    if (this.problems.length < 1_000) this.problems.push({ seq, reason });
    return { signedSeq: null, line };
  }
}
