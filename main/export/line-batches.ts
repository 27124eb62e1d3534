/**
 * Reading a bundle's journal.jsonl out of the tar file, bounded: a chunk at a time, each line at
 * most MAX_LINE_BYTES, nothing of the file followed or run.
 */
import type { FileHandle } from 'node:fs/promises';
import { WRITE_CHUNK } from './layout.js';
import { JOURNAL_FILE } from './statement.js';
import type { TarEntry } from './tar.js';

/** A stored payload is at most 1 MiB; escaped inside a line it can about double. */
const MAX_LINE_BYTES = 4 * 1024 * 1024;

export interface LineReading {
  /** Sees every chunk read, in order (the journal's digest). */
  readonly onBytes: (chunk: Buffer) => void;
  /** Each line's bytes and offset too (a bundle read back by pages). */
  readonly withBytes: boolean;
  /** The error that says the file is not a valid bundle, and why. */
  readonly invalid: (why: string) => Error;
}

/** A line of journal.jsonl; with bytes asked for, also where it starts in the archive and its bytes, newline included (valid until the next batch). */
export interface RawLine {
  readonly text: string;
  readonly offset: number;
  readonly bytes: Buffer | null;
}

/**
 * The lines of a tar entry, a chunk's worth at a time (one await a chunk, not a line). Without
 * bytes (a verdict, `ward review`), a chunk's whole lines are decoded at once and split: the
 * cost of reading a 100,000-event journal is its decoding, not a buffer and a call per line.
 */
export async function* lineBatches(handle: FileHandle, entry: TarEntry, read: LineReading): AsyncGenerator<RawLine[]> {
  const { onBytes, withBytes, invalid } = read;
  const tooLong = () => invalid(`a line of ${JOURNAL_FILE} is longer than ${MAX_LINE_BYTES} bytes`);
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let lineStart = entry.offset;
  let position = entry.offset;
  const end = entry.offset + entry.size;
  // Two buffers: the next chunk is read while this one's lines are checked, so the loop never
  // waits for the disk, nor, on a busy machine, to be woken when a read is done.
  const buffers = [Buffer.alloc(WRITE_CHUNK), Buffer.alloc(WRITE_CHUNK)];
  let turn = 0;
  const readAt = (at: number) => {
    const reading = handle.read(buffers[turn]!, 0, Math.min(WRITE_CHUNK, end - at), at);
    reading.catch(() => undefined); // awaited below; not unhandled if this generator stops first
    return reading;
  };
  let next = position < end ? readAt(position) : null;
  while (next !== null) {
    const { bytesRead, buffer } = await next;
    if (bytesRead === 0) throw invalid(`${JOURNAL_FILE} ended early (the file changed while it was read)`);
    turn ^= 1;
    next = position + bytesRead < end ? readAt(position + bytesRead) : null;
    const data = buffer.subarray(0, bytesRead);
    onBytes(data);
    const batch: RawLine[] = [];
    const push = (bytes: Buffer) => batch.push({ text: bytes.toString('utf8', 0, bytes.length - 1), offset: lineStart, bytes: withBytes ? bytes : null });
    let from = 0;
    const last = data.lastIndexOf(10);
    if (last !== -1 && carryBytes > 0) {
      // The line begun in an earlier chunk ends here.
      const first = data.indexOf(10);
      if (carryBytes + first + 1 > MAX_LINE_BYTES) throw tooLong();
      push(Buffer.concat([...carry, data.subarray(0, first + 1)]));
      carry = [];
      carryBytes = 0;
      from = first + 1;
      lineStart = position + from;
    }
    if (last >= from && !withBytes) {
      // A whole line inside one chunk is shorter than a chunk, so within the bound.
      for (const text of data.toString('utf8', from, last).split('\n')) batch.push({ text, offset: -1, bytes: null });
      from = last + 1;
    }
    for (let newline = data.indexOf(10, from); newline !== -1; newline = data.indexOf(10, from)) {
      push(data.subarray(from, newline + 1));
      from = newline + 1;
      lineStart = position + from;
    }
    if (from < data.length) {
      carryBytes += data.length - from;
      if (carryBytes > MAX_LINE_BYTES) throw tooLong();
      carry.push(Buffer.from(data.subarray(from)));
    }
    position += bytesRead;
    lineStart = position - carryBytes;
    if (batch.length > 0) yield batch;
  }
  // A last line without its newline (a cut file) is still a line: it will not verify.
  if (carryBytes > 0) {
    const bytes = Buffer.concat(carry);
    yield [{ text: bytes.toString('utf8'), offset: lineStart, bytes: withBytes ? bytes : null }];
  }
}
