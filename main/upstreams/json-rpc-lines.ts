/**
 * Newline-delimited JSON-RPC framing for a stdio server's stdout, bounded per line: a line longer
 * than the limit is never buffered whole. Its bytes are only scanned, as they stream, for the
 * top-level `id` and `method`, so the one oversized message can be answered (a waiting request
 * refused) while the lines after it are read as before.
 */
import type { RequestId } from '@modelcontextprotocol/client';

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Longer keys are none Ward looks for; longer ids are not JSON-RPC ids worth answering. */
const MAX_KEY_BYTES = 16;
const MAX_ID_BYTES = 256;

/** What the top level of an oversized message said about itself. */
export interface OversizedMessage {
  /** The top-level `id` (a string or number), when it had a readable one. */
  readonly id: RequestId | undefined;
  /** A top-level `method`: a request or notification from the server, not an answer. */
  readonly hasMethod: boolean;
}

export type Framed = { readonly kind: 'line'; readonly text: string } | { readonly kind: 'oversized'; readonly message: OversizedMessage };

/** Tracks JSON structure byte by byte (UTF-8 continuation bytes never look like ASCII) and keeps only the top level's `id`. */
class TopLevelScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private key: number[] | undefined;
  private lastKey = '';
  private idBytes: number[] | undefined;
  private idText: string | undefined;
  private hasMethod = false;

  feed(bytes: Uint8Array): void {
    for (const byte of bytes) this.step(byte);
  }

  private step(byte: number): void {
    if (this.inString) {
      this.keepId(byte);
      if (this.escaped) this.escaped = false;
      else if (byte === BACKSLASH) this.escaped = true;
      else if (byte === QUOTE) this.endString();
      else if (this.key !== undefined && this.key.length <= MAX_KEY_BYTES) this.key.push(byte);
      return;
    }
    if (byte === QUOTE) {
      this.inString = true;
      if (this.depth === 1 && this.expectKey) this.key = [];
      this.keepId(byte);
      return;
    }
    if (byte === 0x7b /* { */ || byte === 0x5b /* [ */) {
      this.depth++;
      this.expectKey = this.depth === 1 && byte === 0x7b;
      this.idBytes = undefined;
    } else if (byte === 0x7d /* } */ || byte === 0x5d /* ] */) {
      if (this.depth === 1) this.endValue();
      this.depth--;
    } else if (byte === 0x2c /* , */ && this.depth === 1) {
      this.endValue();
      this.expectKey = true;
    } else if (byte === 0x3a /* : */ && this.depth === 1) {
      if (this.lastKey === 'id') this.idBytes = [];
      if (this.lastKey === 'method') this.hasMethod = true;
    } else {
      this.keepId(byte);
    }
  }

  /** The bytes of the top-level id's value, while one is being read (an overlong one is dropped). */
  private keepId(byte: number): void {
    if (this.idBytes === undefined) return;
    this.idBytes.push(byte);
    if (this.idBytes.length > MAX_ID_BYTES) this.idBytes = undefined;
  }

  private endString(): void {
    this.inString = false;
    if (this.key === undefined) return;
    this.lastKey = this.key.length > MAX_KEY_BYTES ? '' : Buffer.from(this.key).toString('utf8');
    this.key = undefined;
    this.expectKey = false;
  }

  private endValue(): void {
    if (this.idBytes !== undefined) this.idText = Buffer.from(this.idBytes).toString('utf8').trim();
    this.idBytes = undefined;
    this.lastKey = '';
  }

  result(): OversizedMessage {
    let id: RequestId | undefined;
    try {
      const parsed: unknown = this.idText === undefined ? undefined : JSON.parse(this.idText);
      if (typeof parsed === 'string' || (typeof parsed === 'number' && Number.isFinite(parsed))) id = parsed;
    } catch {
      // not a readable id: nothing to answer
    }
    return { id, hasMethod: this.hasMethod };
  }
}

export class JsonRpcLines {
  private parts: Uint8Array[] = [];
  private size = 0;
  /** Set while the current line is over the limit: its bytes are scanned, not kept. */
  private oversized: TopLevelScanner | undefined;

  constructor(private readonly maxLineBytes: number) {}

  /** Feeds a chunk of stdout; yields each line it completes, in order. */
  *push(chunk: Uint8Array): Generator<Framed> {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(LF, start);
      const piece = chunk.subarray(start, newline === -1 ? chunk.length : newline);
      this.take(piece);
      if (newline === -1) return;
      start = newline + 1;
      yield this.endLine();
    }
  }

  private take(piece: Uint8Array): void {
    if (this.oversized !== undefined) {
      this.oversized.feed(piece);
    } else if (this.size + piece.length > this.maxLineBytes) {
      this.oversized = new TopLevelScanner();
      for (const part of this.parts) this.oversized.feed(part);
      this.oversized.feed(piece);
      this.parts = [];
      this.size = 0;
    } else if (piece.length > 0) {
      this.parts.push(piece);
      this.size += piece.length;
    }
  }

  private endLine(): Framed {
    if (this.oversized !== undefined) {
      const message = this.oversized.result();
      this.oversized = undefined;
      return { kind: 'oversized', message };
    }
    const line = Buffer.concat(this.parts);
    this.parts = [];
    this.size = 0;
    const end = line.length > 0 && line[line.length - 1] === CR ? line.length - 1 : line.length;
    return { kind: 'line', text: line.toString('utf8', 0, end) };
  }

  /** Forgets a partial line (the transport stopped reading). */
  clear(): void {
    this.parts = [];
    this.size = 0;
    this.oversized = undefined;
  }
}
