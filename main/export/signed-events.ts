/**
 * E4: the signed list of event hashes (events.sha256) and the journal's lines held against it, one
 * by one. Event n is what was signed when its content, hashed after the signed hash of event n-1,
 * gives the signed hash of event n: so an edited event is named even when whoever edited it
 * recomputed every hash after it, the events after it still match, and a line that holds another
 * signed event than its own is a reorder, not a loss.
 */
import { GENESIS_HASH } from '../store/chain.js';
import { contentHash, parseLine } from './journal-lines.js';
import { EVENT_HASHES_FILE } from './statement.js';

const LINE_BYTES = 65;
const HEX_LINE = /^[0-9a-f]{64}$/;

/** The signed hashes, 32 bytes each (a 100,000-event journal holds 3.2 MB). */
export class SignedEvents {
  private constructor(private readonly hashes: Buffer) {}

  /** Parses the list; a string says why it is not the list the statement describes. */
  static parse(data: Buffer, events: number, chainHead: string): SignedEvents | string {
    if (data.length !== events * LINE_BYTES) return `${EVENT_HASHES_FILE} holds ${data.length} bytes, not the ${events} hashes the statement commits to`;
    const hashes = Buffer.alloc(events * 32);
    for (let index = 0; index < events; index++) {
      const text = data.toString('latin1', index * LINE_BYTES, index * LINE_BYTES + 64);
      if (!HEX_LINE.test(text) || data[index * LINE_BYTES + 64] !== 10) return `line ${index + 1} of ${EVENT_HASHES_FILE} is not a SHA-256 in hex`;
      hashes.write(text, index * 32, 'hex');
    }
    const list = new SignedEvents(hashes);
    if (events > 0 && list.hash(events) !== chainHead) return `the last hash of ${EVENT_HASHES_FILE} is not the statement's chain head`;
    return list;
  }

  get count(): number {
    return this.hashes.length / 32;
  }

  /** The signed hash of event `seq` (0: the genesis hash). */
  hash(seq: number): string {
    return seq === 0 ? GENESIS_HASH : this.hashes.toString('hex', (seq - 1) * 32, seq * 32);
  }
}

/** What a line is, held against the signed list: the signed event it is, or null. */
export interface LineMatch {
  readonly signedSeq: number | null;
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
  private readonly seen = new Set<number>();
  private readonly problems: Problem[] = [];
  private reordered = false;

  constructor(
    private readonly list: SignedEvents,
    private readonly conversationId: string,
  ) {}

  push(text: string): LineMatch {
    this.lines += 1;
    const line = this.lines;
    const parsed = parseLine(text, line);
    const claimed = typeof parsed === 'string' || !Number.isSafeInteger(parsed.seq) || parsed.seq < 1 ? line : parsed.seq;
    if (claimed > this.list.count) return this.unmatched(claimed, `event ${claimed} is not covered by the statement, which commits to ${this.list.count} events (events were appended)`);
    if (typeof parsed === 'string') return this.unmatched(claimed, `event ${claimed} is not what was signed: ${parsed}`);
    const signed = parsed.conversationId === this.conversationId && contentHash(this.list.hash(claimed - 1), parsed) === this.list.hash(claimed);
    if (!signed) return this.unmatched(claimed, `event ${claimed} is not what was signed${claimed === line ? '' : ` (line ${line} says it is event ${claimed})`}`);
    if (this.seen.has(claimed)) return this.unmatched(claimed, `event ${claimed} appears again at line ${line}`);
    this.seen.add(claimed);
    if (claimed < this.lastSeq && !this.reordered) {
      this.reordered = true;
      this.problems.push({ seq: claimed, reason: `the events were reordered: line ${line} holds event ${claimed}, after event ${this.lastSeq}` });
    }
    this.lastSeq = Math.max(this.lastSeq, claimed);
    return { signedSeq: claimed };
  }

  /** The problems found, the first bad event's first; signed events no line holds are missing, told as runs. */
  finish(): { firstBadSeq: number | null; problems: string[] } {
    const named = new Set(this.problems.map((problem) => problem.seq));
    const missing: Problem[] = [];
    let runStart = 0;
    for (let seq = 1; seq <= this.list.count + 1 && missing.length < 20; seq++) {
      const absent = seq <= this.list.count && !this.seen.has(seq) && !named.has(seq);
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

  private unmatched(seq: number, reason: string): LineMatch {
    if (this.problems.length < 1_000) this.problems.push({ seq, reason });
    return { signedSeq: null };
  }
}
