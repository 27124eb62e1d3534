/**
 * Checking and reading export bundles (E4): one tar file holding journal.jsonl (every event as
 * stored), events.sha256 (their hashes), the signed statement (DSSE envelope), the signer's public
 * key and a README. Checking one needs nothing but this module: no data folder, keychain or
 * network. Reading a bundle follows, loads and runs nothing from it; every size is bounded.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { WardError, describeError } from '../base/errors.js';
import { ChainChecker, type JournalLine } from './journal-lines.js';
import { lineBatches } from './line-batches.js';
import { isMissing, KEY_FILE, LAYOUT, MAX_BUNDLE_BYTES, MAX_BUNDLE_EVENTS, MAX_KEY_BYTES, STATEMENT_FILE } from './layout.js';
import { EventMatcher, SignedEvents } from './signed-events.js';
import { FINGERPRINT_PATTERN, IN_TOTO_PAYLOAD_TYPE, isFingerprintOf, parsePublicKey, verifySignature } from './signing.js';
import { EVENT_HASHES_FILE, JOURNAL_FILE, statementSchema, type Predicate } from './statement.js';
import { readEntry, readTarIndex, type TarEntry } from './tar.js';

export { BUNDLE_EXTENSION, MAX_BUNDLE_BYTES, MAX_BUNDLE_EVENTS } from './layout.js';
/** Events per page when a bundle is read back for review. */
export const BUNDLE_PAGE_EVENTS = 1_000;

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
  /** Lines that are an event as it was signed (all of them when ok; none when the signature cannot be trusted). */
  readonly signedEvents: number;
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

/** One journal line of an opened bundle: its seq, the line when it parses, its text as stored, and whether it is an event as signed. */
export interface BundleLine {
  readonly seq: number;
  readonly line: JournalLine | null;
  readonly text: string;
  readonly signed: boolean;
}

/** A bundle checked and held open for reading (the desktop's review window, `ward review`). */
export interface OpenedBundle {
  readonly verdict: BundleVerdict;
  readonly pageCount: number;
  /** The events of one page, as lines; a line that is not an event comes back as text. */
  readPage(page: number): Promise<BundleLine[]>;
  close(): Promise<void>;
}

/** What is known of a bundle before its journal is read: the signature, the signer and the signed list. */
export interface EarlyVerdict {
  readonly signature: BundleVerdict['signature'];
  readonly signer: string;
  readonly statement: Predicate;
  /** Problems found so far (the signature, the signer, the list); the journal's come in the verdict. */
  readonly problems: readonly string[];
  /**
   * Each line is held against a signed list as it is read: whether its event is as signed is known
   * at once. Whether the journal as a whole is (its SHA-256; no event missing, added or out of
   * place) is known only in the verdict, after the last line: until then, what is shown is not yet verified.
   */
  readonly perEvent: boolean;
}

/** For `ward review`: the lines as they are checked, so the first screen shows before the whole bundle is read (a bundle whose lines were handed out so has no pages to read back). */
export interface BundleStream {
  /** Called before the journal is read; true to be handed each line. */
  readonly onChecked: (early: EarlyVerdict) => boolean | Promise<boolean>;
  readonly onLine: (line: BundleLine) => void | Promise<void>;
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

interface ParsedStatement {
  readonly predicate: Predicate;
  readonly journalSha256: string;
  /** The digest of events.sha256; null in a v1 statement, which has no list. */
  readonly eventHashesSha256: string | null;
}

function parseStatement(body: Buffer, file: string): ParsedStatement {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalid(file, 'the signed statement is not JSON');
  }
  const parsed = statementSchema(value).safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw invalid(file, `the signed statement is not a Ward journal statement (${issue?.path.join('.') || 'statement'}: ${issue?.message ?? 'malformed'})`);
  }
  const [journal, eventHashes] = parsed.data.subject;
  return { predicate: parsed.data.predicate, journalSha256: journal.digest.sha256, eventHashesSha256: eventHashes?.digest.sha256 ?? null };
}

/**
 * Checks a bundle (E4) and keeps it open for reading: the signature over the statement, the
 * statement against the journal (its digest, event count and chain head), and the chain event
 * by event. Structural problems (not a bundle, truncated, foreign entries, too big) are errors;
 * everything else is a verdict.
 */
export async function openBundle(file: string, options: { expectedSigner?: string; stream?: BundleStream; verdictOnly?: boolean } = {}): Promise<OpenedBundle> {
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
    const statement = parseStatement(body, file);
    const { predicate } = statement;

    const problems: string[] = [];
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

    // Events are held against the signed list only when the statement that commits to it can be trusted.
    const list = readEventHashes(handle.fd, entries, statement, problems);
    const trusted = signature === 'valid' && problems.length === 0 ? list : null;
    let onLine: BundleStream['onLine'] | undefined;
    // The first lines are shown before the journal is read to its end (its digest is taken as it is read).
    if (options.stream !== undefined) {
      const early: EarlyVerdict = { signature, signer: key.fingerprint, statement: predicate, problems: [...problems], perEvent: trusted !== null };
      if (await options.stream.onChecked(early)) onLine = options.stream.onLine;
    }
    const scan = await scanJournal(handle, entries.get(JOURNAL_FILE)!, file, predicate, trusted, { onLine, pages: options.verdictOnly !== true && onLine === undefined });
    problems.unshift(...scan.problems);
    if (scan.journalSha256 !== statement.journalSha256) problems.push(`${JOURNAL_FILE} is not the file the statement commits to (its SHA-256 differs)`);
    const ok = problems.length === 0;
    // Without a list, a line is as signed only when the whole journal is.
    const signed = (seq: number) => (scan.signed === null ? ok : scan.signed[seq - 1] === 1);
    const signedEvents = scan.signed === null ? (ok ? scan.events : 0) : scan.signed.subarray(0, scan.events).reduce((sum, flag) => sum + flag, 0);
    const verdict: BundleVerdict = { ok, file, signature, signer: key.fingerprint, expectedSigner, statement: predicate, events: scan.events, signedEvents, firstBadSeq: scan.firstBadSeq, problems };
    return {
      verdict,
      pageCount: scan.pages.length,
      readPage: (index) => readPage(handle, file, scan.pages, index, signed),
      close: () => handle.close(),
    };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The signed list of event hashes, when the statement has one and it is the one it commits to; else the problem, added to `problems`. */
function readEventHashes(fd: number, entries: ReadonlyMap<string, TarEntry>, statement: ParsedStatement, problems: string[]): SignedEvents | null {
  const entry = entries.get(EVENT_HASHES_FILE);
  if (statement.eventHashesSha256 === null) {
    if (entry !== undefined) problems.push(`${EVENT_HASHES_FILE} is not covered by the statement (a v1 statement has no list of event hashes)`);
    return null;
  }
  const { events, chainHead } = statement.predicate;
  if (entry === undefined) problems.push(`the bundle has no ${EVENT_HASHES_FILE}, which the statement commits to`);
  else if (events > MAX_BUNDLE_EVENTS || entry.size !== events * 65) problems.push(`${EVENT_HASHES_FILE} holds ${entry.size} bytes, not the ${events} hashes the statement commits to`);
  else {
    const data = readEntry(fd, entry);
    if (createHash('sha256').update(data).digest('hex') !== statement.eventHashesSha256) problems.push(`${EVENT_HASHES_FILE} is not the list the statement commits to (its SHA-256 differs)`);
    else {
      const list = SignedEvents.parse(data, events, chainHead);
      if (typeof list !== 'string') return list;
      problems.push(list);
    }
  }
  return null;
}

interface JournalScan {
  readonly journalSha256: string;
  readonly events: number;
  readonly pages: PageMark[];
  /** Per line, 1 when it is the event signed (only when held against a trusted list). */
  readonly signed: Uint8Array | null;
  readonly firstBadSeq: number | null;
  readonly problems: string[];
}

/**
 * The journal, line by line: its digest, where each page of events starts, and each line held
 * against the signed list (or, for a v1 bundle or one whose list cannot be trusted, against the
 * chain and the statement's count and head, which name the first bad event less exactly).
 */
async function scanJournal(handle: FileHandle, journal: TarEntry, file: string, predicate: Predicate, list: SignedEvents | null, read: { onLine?: BundleStream['onLine']; pages: boolean }): Promise<JournalScan> {
  const { onLine } = read;
  const digest = createHash('sha256');
  const matcher = list === null ? null : new EventMatcher(list, predicate.conversationId);
  const chain = new ChainChecker(predicate.conversationId);
  let signed: Uint8Array | null = list === null ? null : new Uint8Array(Math.min(list.count, MAX_BUNDLE_EVENTS) + 1);
  const pages: PageMark[] = [];
  let page: { offset: number; firstSeq: number; hash: ReturnType<typeof createHash> } | null = null;
  const closePage = (endOffset: number) => {
    if (page !== null) pages.push({ offset: page.offset, length: endOffset - page.offset, firstSeq: page.firstSeq, sha256: page.hash.digest('hex') });
    page = null;
  };
  let events = 0;
  for await (const batch of lineBatches(handle, journal, { onBytes: (chunk) => digest.update(chunk), withBytes: read.pages, invalid: (why) => invalid(file, why) })) {
    for (const { text, offset, bytes } of batch) {
      if (events >= MAX_BUNDLE_EVENTS) throw invalid(file, `${JOURNAL_FILE} holds more than ${MAX_BUNDLE_EVENTS.toLocaleString('en-US')} events`);
      // Pages are marked (and hashed) only for a bundle that will be read back.
      if (read.pages && events % BUNDLE_PAGE_EVENTS === 0) {
        closePage(offset);
        page = { offset, firstSeq: events + 1, hash: createHash('sha256') };
      }
      if (bytes !== null) page?.hash.update(bytes);
      events += 1;
      let isSigned = false;
      let parsed: JournalLine | null | undefined;
      if (matcher === null) chain.push(text);
      else {
        const match = matcher.push(text);
        parsed = match.line;
        if (match.signedSeq !== null) {
          if (events > signed!.length) signed = grown(signed!);
          signed![events - 1] = 1;
          isSigned = true;
        }
      }
      if (onLine !== undefined) await onLine(bundleLine(events, text, isSigned, parsed));
    }
  }
  closePage(journal.offset + journal.size);
  const journalSha256 = digest.digest('hex');
  if (matcher !== null) return { journalSha256, events, pages, signed, ...matcher.finish() };

  const problems: string[] = [];
  let firstBadSeq: number | null = null;
  const badAt = (seq: number, reason: string) => {
    problems.push(reason);
    firstBadSeq ??= seq;
  };
  if (chain.problem !== null) badAt(chain.problem.firstBadSeq, chain.problem.reason);
  if (chain.events > predicate.events) badAt(predicate.events + 1, `event ${predicate.events + 1} is not covered by the statement, which commits to ${predicate.events} events (events were appended)`);
  else if (chain.events < predicate.events) badAt(chain.events + 1, `event ${chain.events + 1} is missing: the statement commits to ${predicate.events} events, the journal has ${chain.events}`);
  else if (chain.problem === null && chain.head !== predicate.chainHead) badAt(chain.events, `the chain head does not match the statement's (${predicate.chainHead.slice(0, 12)}…)`);
  return { journalSha256, events, pages, signed: null, firstBadSeq, problems };
}

/** Room for more lines than the statement counted (appended ones are never signed, but are marked). */
function grown(flags: Uint8Array): Uint8Array {
  const next = new Uint8Array(Math.min(flags.length * 2, MAX_BUNDLE_EVENTS));
  next.set(flags);
  return next;
}

/** One page of the journal, read again from the open bundle and checked against the hash taken when it was opened. */
async function readPage(handle: FileHandle, file: string, pages: readonly PageMark[], index: number, signed: (seq: number) => boolean): Promise<BundleLine[]> {
  const mark = pages[index];
  if (mark === undefined) throw new WardError('not_found', `the bundle has no page ${index}`);
  const data = Buffer.alloc(mark.length);
  const { bytesRead } = await handle.read(data, 0, mark.length, mark.offset);
  if (bytesRead !== mark.length || createHash('sha256').update(data).digest('hex') !== mark.sha256) throw new WardError('bundle_invalid', `${file} changed after it was opened; open it again`);
  const text = data.toString('utf8');
  const lines = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text.split('\n');
  return lines.map((line, offset) => bundleLine(mark.firstSeq + offset, line, signed(mark.firstSeq + offset)));
}

/** A line for review; `parsed`, when the matcher already parsed it, is not parsed again. */
function bundleLine(seq: number, text: string, signed: boolean, parsed?: JournalLine | null): BundleLine {
  if (parsed === undefined) {
    parsed = null;
    try {
      parsed = JSON.parse(text) as JournalLine;
    } catch {
      // shown as an unreadable line
    }
  }
  return { seq, line: parsed !== null && typeof parsed === 'object' && typeof parsed.payload === 'string' ? parsed : null, text, signed };
}

/** Checks a bundle and closes it: the verdict only. */
export async function verifyBundle(file: string, options: { expectedSigner?: string } = {}): Promise<BundleVerdict> {
  const bundle = await openBundle(file, { ...options, verdictOnly: true });
  try {
    return bundle.verdict;
  } finally {
    await bundle.close();
  }
}
