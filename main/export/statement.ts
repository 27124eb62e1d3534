/**
 * E1: what a bundle's signature commits to, an in-toto Statement v1 whose subjects are the
 * journal file and the list of its events' hashes, and whose predicate says which conversation
 * it is and where its chain ends. Bundles Ward made before the list (predicate v1) have the
 * journal as their one subject; they still verify, as a whole.
 */
import * as z from 'zod';

export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const PREDICATE_TYPE = 'urn:ward:journal-export:v2';
const PREDICATE_TYPE_V1 = 'urn:ward:journal-export:v1';
export const JOURNAL_FILE = 'journal.jsonl' as const;
/** Event n's hash on line n, 64 lowercase hex digits and a newline: what names the first altered event. */
export const EVENT_HASHES_FILE = 'events.sha256';

const hex64 = z.string().regex(/^[0-9a-f]{64}$/);
const count = z.number().int().min(0);

export const PREDICATE = z.strictObject({
  conversationId: z.string().regex(/^[0-9a-f-]{36}$/),
  title: z.string().max(200),
  /** N1: the namespace is named by its hash unless the exporter asked to name it. */
  namespaceHash: hex64,
  namespace: z.string().regex(/^[a-z0-9-]{1,32}$/).optional(),
  events: count,
  firstSeq: count.nullable(),
  lastSeq: count,
  chainHead: hex64,
  agent: z.strictObject({ name: z.string().max(64), version: count }),
  cliVersion: z.string().max(64),
  wardVersion: z.string().max(64),
  exportedAt: z.iso.datetime(),
  /** Runs whose outcome nobody knows (R8): exported as they are, and said so here. */
  uncertainRuns: z.array(z.string().max(64)).max(10_000),
  /** J3: the newest event an anchor covered when the bundle was made (0: none). */
  anchoredSeq: count,
});
export type Predicate = z.infer<typeof PREDICATE>;

const subject = <N extends string>(name: N) => z.strictObject({ name: z.literal(name), digest: z.strictObject({ sha256: hex64 }) });

const STATEMENT_V2 = z.strictObject({ _type: z.literal(STATEMENT_TYPE), subject: z.tuple([subject(JOURNAL_FILE), subject(EVENT_HASHES_FILE)]), predicateType: z.literal(PREDICATE_TYPE), predicate: PREDICATE });
const STATEMENT_V1 = z.strictObject({ _type: z.literal(STATEMENT_TYPE), subject: z.tuple([subject(JOURNAL_FILE)]), predicateType: z.literal(PREDICATE_TYPE_V1), predicate: PREDICATE });
export type Statement = z.infer<typeof STATEMENT_V2> | z.infer<typeof STATEMENT_V1>;

/** The schema of a statement by its predicate type (v1 when it names another: its errors then say what v1 expects). */
export function statementSchema(value: unknown): typeof STATEMENT_V2 | typeof STATEMENT_V1 {
  return (value as { predicateType?: unknown } | null)?.predicateType === PREDICATE_TYPE ? STATEMENT_V2 : STATEMENT_V1;
}

/** The statement a bundle signs; with no event list, the v1 statement older Wards signed. */
export function statementFor(journalSha256: string, eventHashesSha256: string | null, predicate: Predicate): Statement {
  const journal = { name: JOURNAL_FILE as typeof JOURNAL_FILE, digest: { sha256: journalSha256 } };
  if (eventHashesSha256 === null) return { _type: STATEMENT_TYPE, subject: [journal], predicateType: PREDICATE_TYPE_V1, predicate };
  return { _type: STATEMENT_TYPE, subject: [journal, { name: EVENT_HASHES_FILE, digest: { sha256: eventHashesSha256 } }], predicateType: PREDICATE_TYPE, predicate };
}
