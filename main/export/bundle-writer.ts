/**
 * Writing an export bundle (E1–E3): journal.jsonl streamed from the store and chain-checked on the
 * way, the list of its events' hashes, the signed statement over both, the key and a README.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WardError, describeError } from '../base/errors.js';
import { canonicalize } from '../base/jcs.js';
import type { StoredEvent } from '../store/journal.js';
import { exportLines } from './journal-lines.js';
import { isMissing, KEY_FILE, README_FILE, STATEMENT_FILE, WRITE_CHUNK } from './layout.js';
import { envelope, type SigningKey } from './signing.js';
import { EVENT_HASHES_FILE, JOURNAL_FILE, statementFor, type Predicate } from './statement.js';
import { TarWriter } from './tar.js';

/**
 * Creates `file` (it must not exist), lets `fill` write it, and removes it if anything fails:
 * an export writes nothing but its output file, and never leaves half of one.
 */
export function writeNewFile(file: string, fill: (fd: number) => void): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new WardError('usage', `${file} already exists; choose another name with --out or remove it`);
    if (isMissing(error)) throw new WardError('not_found', `no such folder: ${path.dirname(file)} (to write ${path.basename(file)} in); create it or choose another --out`, { cause: error });
    throw new WardError('usage', `cannot create ${file}: ${describeError(error)}`, { cause: error });
  }
  try {
    fill(fd);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
    throw error;
  }
}

/** Buffers small writes into large ones. */
export class ChunkedWriter {
  private parts: string[] = [];
  private size = 0;

  constructor(private readonly sink: (chunk: Buffer) => void) {}

  write(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= WRITE_CHUNK) this.flush();
  }

  flush(): void {
    if (this.parts.length === 0) return;
    this.sink(Buffer.from(this.parts.join(''), 'utf8'));
    this.parts = [];
    this.size = 0;
  }
}

export interface BundleContents {
  readonly conversationId: string;
  /** The head the export stops at: events after it (a run still writing) are not part of it. */
  readonly head: { readonly seq: number; readonly hash: string };
  /** The stored events 1..head.seq, in order. */
  readonly events: Iterable<StoredEvent>;
  /** What the statement says besides what the journal itself settles. */
  readonly predicate: Omit<Predicate, 'events' | 'firstSeq' | 'lastSeq' | 'chainHead'>;
  /** Sees each line before it is written; throws to refuse the export (E3). */
  readonly check: (line: string, event: StoredEvent) => void;
}

export interface WrittenBundle {
  readonly file: string;
  readonly bytes: number;
  readonly events: number;
  readonly journalSha256: string;
  readonly fingerprint: string;
}

/** Streams the journal into a new bundle, checking its chain on the way: a broken journal is never signed. */
export function writeBundle(file: string, contents: BundleContents, key: SigningKey, readme: string): WrittenBundle {
  let written: Omit<WrittenBundle, 'bytes'> | undefined;
  writeNewFile(file, (fd) => {
    const tar = new TarWriter(fd, new Date(contents.predicate.exportedAt));
    const journal = tar.beginFile(JOURNAL_FILE);
    const digest = createHash('sha256');
    const out = new ChunkedWriter((chunk) => {
      digest.update(chunk);
      journal.write(chunk);
    });
    const hashes = Buffer.alloc(contents.head.seq * 65, '\n');
    // Each line checked against the chain, and the whole of it against the head, before the statement is signed.
    for (const { line, event } of exportLines(contents.conversationId, contents.head, contents.events, contents.check)) {
      out.write(line);
      hashes.write(event.hash, (event.seq - 1) * 65, 'latin1');
    }
    out.flush();
    journal.end();
    tar.addFile(EVENT_HASHES_FILE, hashes);
    const journalSha256 = digest.digest('hex');
    const { seq: events, hash: chainHead } = contents.head;
    const predicate: Predicate = { ...contents.predicate, events, firstSeq: events === 0 ? null : 1, lastSeq: events, chainHead };
    const statement = Buffer.from(canonicalize(statementFor(journalSha256, createHash('sha256').update(hashes).digest('hex'), predicate)), 'utf8');
    tar.addFile(STATEMENT_FILE, Buffer.from(`${JSON.stringify(envelope(statement, key), null, 2)}\n`, 'utf8'));
    tar.addFile(KEY_FILE, Buffer.from(key.pem, 'utf8'));
    tar.addFile(README_FILE, Buffer.from(readme, 'utf8'));
    tar.finish();
    written = { file, events, journalSha256, fingerprint: key.fingerprint };
  });
  return { ...written!, bytes: fs.statSync(file).size };
}
