/**
 * Coalesces the CLI's text deltas into journal-sized `assistant_delta` events: at most one per
 * `intervalMs` (the first one `intervalMs` after a block starts, so a block that arrives whole
 * needs none), or sooner once `maxBytes` are waiting. The `assistant_text` that closes a block
 * stays authoritative: once a block has streamed, its deltas concatenate to exactly that text.
 *
 * Redaction: a secret could be split across two deltas, so each flush redacts the whole block
 * and holds back a tail that could be the start of a secret until the next flush shows it is not.
 */
import type { PayloadOf } from '../../common/events.js';

/** `messageIndex`: which assistant_text of the run the delta belongs to (0 for the first). */
export type AssistantDelta = PayloadOf<'assistant_delta'>;

export interface TextDeltaOptions {
  /** Records one delta (the journal commits it before anyone is told). */
  readonly emit: (delta: AssistantDelta) => void;
  /** Replaces every complete secret with a marker. */
  readonly redact: (text: string) => string;
  /** The secrets `redact` removes (read at each flush: the list grows during a run). */
  readonly secrets: () => readonly string[];
  /** A timed flush failed (the journal is failing): the run must end. */
  readonly onError: (error: unknown) => void;
  readonly intervalMs?: number;
  readonly maxBytes?: number;
  /** Text beyond this many characters of one block is not streamed (the final text is truncated too). */
  readonly maxChars?: number;
  readonly now?: () => number;
}

export class TextDeltaCoalescer {
  private messageIndex = 0;
  /** The block so far, raw (redacted at each flush). */
  private block = '';
  /** Characters of the redacted block already emitted. */
  private sent = 0;
  private waitingBytes = 0;
  private lastFlushAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly intervalMs: number;
  private readonly maxBytes: number;
  private readonly maxChars: number;
  private readonly now: () => number;

  constructor(private readonly options: TextDeltaOptions) {
    this.intervalMs = options.intervalMs ?? 50;
    this.maxBytes = options.maxBytes ?? 1024;
    this.maxChars = options.maxChars ?? 256 * 1024;
    this.now = options.now ?? (() => performance.now());
  }

  /** A delta of the block being streamed. */
  push(text: string): void {
    if (text === '' || this.block.length >= this.maxChars) return;
    if (this.block === '') this.lastFlushAt = this.now();
    const taken = text.slice(0, this.maxChars - this.block.length);
    this.block += taken;
    this.waitingBytes += Buffer.byteLength(taken);
  }

  /** After the messages of one stdout chunk: flush when enough is waiting, else make sure a flush is due. */
  afterChunk(): void {
    if (this.waitingBytes === 0) return;
    if (this.waitingBytes >= this.maxBytes || this.now() - this.lastFlushAt >= this.intervalMs) {
      this.flush(false);
      return;
    }
    this.timer ??= setTimeout(
      () => {
        this.timer = undefined;
        try {
          this.flush(false);
        } catch (error) {
          this.options.onError(error);
        }
      },
      Math.max(0, this.lastFlushAt + this.intervalMs - this.now()),
    );
  }

  /**
   * The block's authoritative text arrived (call before recording it). A block that streamed
   * gets its rest; one that never did needs no deltas at all.
   */
  complete(): void {
    if (this.sent > 0) this.flush(true);
    this.reset();
    this.messageIndex += 1;
  }

  /** The turn ended without the block's final text (a stop, a crash): what was streamed stands. */
  finish(): void {
    if (this.block !== '') this.flush(true);
    this.reset();
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private reset(): void {
    this.close();
    this.block = '';
    this.sent = 0;
    this.waitingBytes = 0;
  }

  private flush(final: boolean): void {
    const redacted = this.options.redact(this.block);
    let end = final ? redacted.length : redacted.length - this.possibleSecretStart();
    // Never end a delta between the halves of a surrogate pair.
    if (!final && end > 0 && /[\ud800-\udbff]/.test(redacted[end - 1]!)) end -= 1;
    this.lastFlushAt = this.now();
    this.waitingBytes = 0;
    if (end <= this.sent) return;
    const text = redacted.slice(this.sent, end);
    this.sent = end;
    this.options.emit({ text, messageIndex: this.messageIndex });
  }

  /** The length of the longest tail of the block that is the beginning of a secret. */
  private possibleSecretStart(): number {
    let longest = 0;
    for (const secret of this.options.secrets()) {
      if (secret.length < 8) continue; // redact() leaves these alone too
      for (let length = Math.min(secret.length - 1, this.block.length); length > longest; length -= 1) {
        if (this.block.endsWith(secret.slice(0, length))) {
          longest = length;
          break;
        }
      }
    }
    return longest;
  }
}
