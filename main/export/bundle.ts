/**
 * Export bundles (E1–E4): one tar file holding journal.jsonl (every event as stored), the signed
 * statement (DSSE envelope), the signer's public key and a README for whoever receives it.
 * Checking one needs nothing but this module: no data folder, keychain or network. Reading a
 * bundle follows, loads and runs nothing from it; every size is bounded.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { WardError, describeError } from '../base/errors.js';
import type { StoredEvent } from '../store/journal.js';
import { ChainChecker, exportLines, type JournalLine } from './journal-lines.js';
import { envelope, FINGERPRINT_PATTERN, IN_TOTO_PAYLOAD_TYPE, isFingerprintOf, parsePublicKey, verifySignature, type SigningKey } from './signing.js';
import { JOURNAL_FILE, STATEMENT, statementFor, type Predicate } from './statement.js';
import { readEntry, readTarIndex, TarWriter, type TarEntry, type TarLayout } from './tar.js';

export const BUNDLE_EXTENSION = '.wardbundle';
export const MAX_BUNDLE_BYTES = 1024 ** 3;
export const MAX_BUNDLE_EVENTS = 10_000_000;
/** A stored payload is at most 1 MiB; escaped inside a line it can about double. */
const MAX_LINE_BYTES = 4 * 1024 * 1024;
const STATEMENT_FILE = 'statement.dsse.json';
const KEY_FILE = 'signer.pub.pem';
const README_FILE = 'README.txt';
const MAX_KEY_BYTES = 16 * 1024;
const LAYOUT: TarLayout = {
  files: {
    [JOURNAL_FILE]: { maxBytes: MAX_BUNDLE_BYTES, required: true },
    [STATEMENT_FILE]: { maxBytes: 1024 * 1024, required: true },
    [KEY_FILE]: { maxBytes: MAX_KEY_BYTES, required: true },
    [README_FILE]: { maxBytes: 64 * 1024, required: true },
  },
};
/** Events per page when a bundle is read back for review. */
export const BUNDLE_PAGE_EVENTS = 1_000;
/** Written in chunks of about this size. */
const WRITE_CHUNK = 1024 * 1024;

/** A path that names nothing (ENOTDIR: a part of it is a file, so nothing is there either). */
function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

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
    // Each line checked against the chain, and the whole of it against the head, before the statement is signed.
    for (const { line } of exportLines(contents.conversationId, contents.head, contents.events, contents.check)) out.write(line);
    out.flush();
    journal.end();
    const journalSha256 = digest.digest('hex');
    const { seq: events, hash: chainHead } = contents.head;
    const predicate: Predicate = { ...contents.predicate, events, firstSeq: events === 0 ? null : 1, lastSeq: events, chainHead };
    const statement = Buffer.from(JSON.stringify(statementFor(journalSha256, predicate)), 'utf8');
    tar.addFile(STATEMENT_FILE, Buffer.from(`${JSON.stringify(envelope(statement, key), null, 2)}\n`, 'utf8'));
    tar.addFile(KEY_FILE, Buffer.from(key.pem, 'utf8'));
    tar.addFile(README_FILE, Buffer.from(readme, 'utf8'));
    tar.finish();
    written = { file, events, journalSha256, fingerprint: key.fingerprint };
  });
  return { ...written!, bytes: fs.statSync(file).size };
}

export interface BundleVerdict {
  readonly ok: boolean;
  readonly file: string;
  /** missing: the envelope carries no signature. */
  readonly signature: 'valid' | 'invalid' | 'missing';
  /** The fingerprint of the key the bundle carries. */
  readonly signer: string;
  /** The signer asked for with --signer, if any. */
  readonly expectedSigner: string | null;
  readonly statement: Predicate;
  /** Events found in journal.jsonl. */
  readonly events: number;
  /** The first event that is not as signed, when one is. */
  readonly firstBadSeq: number | null;
  /** What is wrong, most telling first; empty when ok. */
  readonly problems: readonly string[];
}

interface PageMark {
  readonly offset: number;
  readonly length: number;
  readonly firstSeq: number;
  readonly sha256: string;
}

/** A bundle checked and held open for reading (the desktop's review window, `ward review`). */
/** One journal line of an opened bundle: its seq, the line when it parses, and its text as stored. */
export interface BundleLine {
  readonly seq: number;
  readonly line: JournalLine | null;
  readonly text: string;
}

export interface OpenedBundle {
  readonly verdict: BundleVerdict;
  readonly pageCount: number;
  /** The events of one page, as lines; a line that is not an event comes back as text. */
  readPage(page: number): Promise<BundleLine[]>;
  close(): Promise<void>;
}

function invalid(file: string, why: string): WardError {
  return new WardError('bundle_invalid', `${file} is not a valid bundle: ${why}`);
}

/** Reads the signer a person trusts: a fingerprint, or a public key file (bounded, regular). */
export function parseSigner(value: string): { fingerprint: string } {
  if (FINGERPRINT_PATTERN.test(value)) return { fingerprint: value };
  let stat: fs.Stats;
  try {
    stat = fs.statSync(value);
  } catch {
    throw new WardError('usage', `--signer takes a key fingerprint (SHA256:…) or a public key file; ${JSON.stringify(value.slice(0, 80))} is neither`);
  }
  if (!stat.isFile() || stat.size > MAX_KEY_BYTES) throw new WardError('usage', `--signer ${value} is not a public key file (a regular file under ${MAX_KEY_BYTES} bytes)`);
  return { fingerprint: parsePublicKey(fs.readFileSync(value, 'utf8'), `--signer ${value}`).fingerprint };
}

/** Lines of a tar entry, read in chunks; each with where it starts in the archive. */
async function* linesOf(handle: FileHandle, entry: TarEntry, onBytes: (chunk: Buffer) => void, file: string): AsyncGenerator<{ text: string; offset: number }> {
  const chunk = Buffer.alloc(WRITE_CHUNK);
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let lineStart = entry.offset;
  let position = entry.offset;
  const end = entry.offset + entry.size;
  while (position < end) {
    const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, end - position), position);
    if (bytesRead === 0) throw invalid(file, `${JOURNAL_FILE} ended early (the file changed while it was read)`);
    const data = chunk.subarray(0, bytesRead);
    onBytes(data);
    let from = 0;
    for (let newline = data.indexOf(10, from); newline !== -1; newline = data.indexOf(10, from)) {
      const piece = data.subarray(from, newline);
      if (carryBytes + piece.length > MAX_LINE_BYTES) throw invalid(file, `a line of ${JOURNAL_FILE} is longer than ${MAX_LINE_BYTES} bytes`);
      const text = carryBytes === 0 ? piece.toString('utf8') : Buffer.concat([...carry, piece]).toString('utf8');
      yield { text, offset: lineStart };
      carry = [];
      carryBytes = 0;
      from = newline + 1;
      lineStart = position + from;
    }
    if (from < data.length) {
      carryBytes += data.length - from;
      if (carryBytes > MAX_LINE_BYTES) throw invalid(file, `a line of ${JOURNAL_FILE} is longer than ${MAX_LINE_BYTES} bytes`);
      carry.push(Buffer.from(data.subarray(from)));
    }
    position += bytesRead;
  }
  // A last line without its newline (a cut file) is still a line: it will not verify.
  if (carryBytes > 0) yield { text: Buffer.concat(carry).toString('utf8'), offset: lineStart };
}

function parseEnvelope(raw: Buffer, file: string): { body: Buffer; payloadType: string; signatures: Array<{ keyid: string; sig: string }> } {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalid(file, `${STATEMENT_FILE} is not JSON`);
  }
  const env = value as { payloadType?: unknown; payload?: unknown; signatures?: unknown };
  if (typeof env !== 'object' || env === null || typeof env.payloadType !== 'string' || typeof env.payload !== 'string' || !Array.isArray(env.signatures)) {
    throw invalid(file, `${STATEMENT_FILE} is not a DSSE envelope (payloadType, payload, signatures)`);
  }
  if (env.payloadType !== IN_TOTO_PAYLOAD_TYPE) throw invalid(file, `${STATEMENT_FILE} holds ${JSON.stringify(env.payloadType.slice(0, 60))}, not an in-toto statement`);
  const signatures = env.signatures.slice(0, 16).filter((entry): entry is { keyid: string; sig: string } => typeof entry?.sig === 'string' && typeof entry?.keyid === 'string');
  return { body: Buffer.from(env.payload, 'base64'), payloadType: env.payloadType, signatures };
}

function parseStatement(body: Buffer, file: string): { predicate: Predicate; sha256: string } {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalid(file, 'the signed statement is not JSON');
  }
  const parsed = STATEMENT.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(file, `the signed statement is not a Ward journal statement (${issue?.path.join('.') || 'statement'}: ${issue?.message ?? 'malformed'})`);
  }
  return { predicate: parsed.data.predicate, sha256: parsed.data.subject[0].digest.sha256 };
}

/**
 * Checks a bundle (E4) and keeps it open for reading: the signature over the statement, the
 * statement against the journal (its digest, event count and chain head), and the chain event
 * by event. Structural problems (not a bundle, truncated, foreign entries, too big) are errors;
 * everything else is a verdict.
 */
export async function openBundle(file: string, options: { expectedSigner?: string } = {}): Promise<OpenedBundle> {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (error) {
    if (isMissing(error)) throw new WardError('not_found', `no such file: ${file}`, { cause: error });
    throw new WardError('not_found', `cannot read ${file}: ${describeError(error)}`, { cause: error });
  }
  if (!stat.isFile()) throw new WardError('usage', `${file} is not a regular file`);
  if (stat.size > MAX_BUNDLE_BYTES) throw invalid(file, `it is ${stat.size} bytes; bundles are at most ${MAX_BUNDLE_BYTES} bytes (1 GiB)`);
  const handle = await open(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  try {
    const size = (await handle.stat()).size;
    if (size > MAX_BUNDLE_BYTES) throw invalid(file, `it is ${size} bytes; bundles are at most ${MAX_BUNDLE_BYTES} bytes (1 GiB)`);
    const entries = readTarIndex(handle.fd, size, LAYOUT, file);
    const key = parsePublicKey(readEntry(handle.fd, entries.get(KEY_FILE)!).toString('utf8'), `${KEY_FILE} in ${file}`);
    const { body, payloadType, signatures } = parseEnvelope(readEntry(handle.fd, entries.get(STATEMENT_FILE)!), file);
    const { predicate, sha256 } = parseStatement(body, file);

    const problems: string[] = [];
    let firstBadSeq: number | null = null;
    const badAt = (seq: number | null, reason: string) => {
      problems.push(reason);
      if (seq !== null && firstBadSeq === null) firstBadSeq = seq;
    };

    let signature: BundleVerdict['signature'] = 'missing';
    if (signatures.length === 0) problems.push('the statement is not signed');
    else if (signatures.some((entry) => verifySignature(payloadType, body, entry.sig, key))) signature = 'valid';
    else {
      signature = 'invalid';
      problems.push(`the statement's signature does not verify with the bundle's key ${key.fingerprint} (the statement was changed, or signed by another key)`);
    }
    // A fingerprint in the form older exports printed names the same key: shown in today's form.
    const expectedSigner = options.expectedSigner === undefined ? null : isFingerprintOf(options.expectedSigner, key) ? key.fingerprint : options.expectedSigner;
    if (expectedSigner !== null && expectedSigner !== key.fingerprint) problems.push(`the bundle is signed by ${key.fingerprint}, not by the expected signer ${expectedSigner}`);

    // The journal, line by line: its digest, its chain, and where each page of events starts.
    const journal = entries.get(JOURNAL_FILE)!;
    const digest = createHash('sha256');
    const chain = new ChainChecker(predicate.conversationId);
    const pages: PageMark[] = [];
    let page: { offset: number; firstSeq: number; hash: ReturnType<typeof createHash> } | null = null;
    const closePage = (endOffset: number) => {
      if (page !== null) pages.push({ offset: page.offset, length: endOffset - page.offset, firstSeq: page.firstSeq, sha256: page.hash.digest('hex') });
      page = null;
    };
    for await (const { text, offset } of linesOf(handle, journal, (chunk) => digest.update(chunk), file)) {
      if (chain.events >= MAX_BUNDLE_EVENTS) throw invalid(file, `${JOURNAL_FILE} holds more than ${MAX_BUNDLE_EVENTS.toLocaleString('en-US')} events`);
      if (chain.events % BUNDLE_PAGE_EVENTS === 0) {
        closePage(offset);
        page = { offset, firstSeq: chain.events + 1, hash: createHash('sha256') };
      }
      page!.hash.update(text).update('\n');
      chain.push(text);
    }
    closePage(journal.offset + journal.size);

    if (chain.problem !== null) badAt(chain.problem.firstBadSeq, chain.problem.reason);
    if (chain.events > predicate.events) badAt(predicate.events + 1, `event ${predicate.events + 1} is not covered by the statement, which commits to ${predicate.events} events (events were appended)`);
    else if (chain.events < predicate.events) badAt(chain.events + 1, `event ${chain.events + 1} is missing: the statement commits to ${predicate.events} events, the journal has ${chain.events}`);
    else if (chain.problem === null && chain.head !== predicate.chainHead) badAt(chain.events, `the chain head does not match the statement's (${predicate.chainHead.slice(0, 12)}…)`);
    if (digest.digest('hex') !== sha256) problems.push(`${JOURNAL_FILE} is not the file the statement commits to (its SHA-256 differs)`);

    const verdict: BundleVerdict = { ok: problems.length === 0, file, signature, signer: key.fingerprint, expectedSigner, statement: predicate, events: chain.events, firstBadSeq, problems };
    return {
      verdict,
      pageCount: pages.length,
      readPage: (index) => readPage(handle, file, pages, index),
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** One page of the journal, read again from the open bundle and checked against the hash taken when it was opened. */
async function readPage(handle: FileHandle, file: string, pages: readonly PageMark[], index: number): Promise<BundleLine[]> {
  const mark = pages[index];
  if (mark === undefined) throw new WardError('not_found', `the bundle has no page ${index}`);
  const data = Buffer.alloc(mark.length);
  const { bytesRead } = await handle.read(data, 0, mark.length, mark.offset);
  const text = data.subarray(0, bytesRead).toString('utf8');
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  const check = createHash('sha256');
  for (const line of lines) check.update(line).update('\n');
  if (bytesRead !== mark.length || check.digest('hex') !== mark.sha256) throw new WardError('bundle_invalid', `${file} changed after it was opened; open it again`);
  return lines.map((line, offset) => {
    let parsed: JournalLine | null = null;
    try {
      parsed = JSON.parse(line) as JournalLine;
    } catch {
      // shown as an unreadable line
    }
    return { seq: mark.firstSeq + offset, line: parsed !== null && typeof parsed === 'object' && typeof parsed.payload === 'string' ? parsed : null, text: line };
  });
}

/** Checks a bundle and closes it: the verdict only. */
export async function verifyBundle(file: string, options: { expectedSigner?: string } = {}): Promise<BundleVerdict> {
  const bundle = await openBundle(file, options);
  try {
    return bundle.verdict;
  } finally {
    await bundle.close();
  }
}
