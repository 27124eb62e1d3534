/**
 * E1: what a bundle's signature commits to, an in-toto Statement v1 whose one subject is the
 * journal file and whose predicate says which conversation it is and where its chain ends.
 */
import { z } from 'zod';

export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const PREDICATE_TYPE = 'urn:ward:journal-export:v1';
export const JOURNAL_FILE = 'journal.jsonl';

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

export const STATEMENT = z.strictObject({
  _type: z.literal(STATEMENT_TYPE),
  subject: z.tuple([z.strictObject({ name: z.literal(JOURNAL_FILE), digest: z.strictObject({ sha256: hex64 }) })]),
  predicateType: z.literal(PREDICATE_TYPE),
  predicate: PREDICATE,
});
export type Statement = z.infer<typeof STATEMENT>;

export function statementFor(journalSha256: string, predicate: Predicate): Statement {
  return { _type: STATEMENT_TYPE, subject: [{ name: JOURNAL_FILE, digest: { sha256: journalSha256 } }], predicateType: PREDICATE_TYPE, predicate };
}
