/** Real bundles for tests: a real journal in a real SQLite file, written and read by Ward's own code. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { journalEvent } from '../../common/events.js';
import { writeBundle } from '../../main/export/bundle-writer.js';
import { envelope, generateSigningKey, loadSigningKey, type SigningKey } from '../../main/export/signing.js';
import { statementFor, type Predicate } from '../../main/export/statement.js';
import { hashEvent } from '../../main/store/chain.js';
import { readEntry, readTarIndex, TarWriter } from '../../main/export/tar.js';
import type { NamespaceStore } from '../../main/store/namespace-store.js';
import { RUN_STARTED } from '../support/events.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';

export const BUNDLE_FILES = ['journal.jsonl', 'events.sha256', 'statement.dsse.json', 'signer.pub.pem', 'README.txt'];

/** One turn as a run journals it: prompt, a tool call and its result, the answer, usage (`costUsd` the CLI's session total), the end. */
export function appendTurn(store: NamespaceStore, conversationId: string, runId: string, answer: string, costUsd: number | null = 0.002, model = RUN_STARTED.model): void {
  store.journal.appendMany(
    conversationId,
    [
      journalEvent('run_started', { ...RUN_STARTED, model }),
      journalEvent('user_prompt', { text: 'What is the weather in Lisbon?' }),
      journalEvent('tool_call', { toolUseId: `${runId}-t1`, tool: 'weather_lookup', arguments: { city: 'Lisbon' } }),
      journalEvent('tool_result', { toolUseId: `${runId}-t1`, tool: 'weather_lookup', ok: true, bytes: 14, durationMs: 30, errorCode: null, preview: 'sunny, 24 °C', previewTruncated: false }),
      journalEvent('assistant_text', { text: answer }),
      journalEvent('model_call', { path: '/v1/messages', status: 200, durationMs: 40, problem: null, usage: { inputTokens: 120, outputTokens: 30, cacheReadTokens: 0, cacheCreationTokens: 0 } }),
      journalEvent('usage', { inputTokens: 120, outputTokens: 30, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd }),
      journalEvent('run_finished', { state: 'succeeded', reason: null }),
    ].map((event) => ({ ...event, runId })),
  );
}

export interface MadeBundle {
  readonly file: string;
  readonly key: SigningKey;
  readonly conversationId: string;
  readonly dir: string;
}

/** A conversation with `turns` turns, exported to a bundle signed with a fresh key. */
export function makeBundle(turns = 2, options: { uncertainRuns?: string[]; title?: string; agentName?: string; after?: (store: NamespaceStore, conversationId: string) => void } = {}): MadeBundle {
  const dir = tempDir('ward-bundle-');
  const { core, store, conversation } = seedConversation(path.join(dir, 'home'));
  try {
    for (let turn = 1; turn <= turns; turn++) appendTurn(store, conversation.id, `00000000-0000-4000-8000-00000000000${turn}`, `It is sunny in Lisbon (turn ${turn}).`, 0.002 * turn);
    options.after?.(store, conversation.id);
    const key = loadSigningKey(generateSigningKey());
    const head = store.journal.head(conversation.id);
    const file = path.join(dir, 'chat.wardbundle');
    writeBundle(
      file,
      {
        conversationId: conversation.id,
        head,
        events: store.journal.stored(conversation.id, head.seq),
        check: () => undefined,
        predicate: {
          conversationId: conversation.id,
          title: options.title ?? conversation.title,
          namespaceHash: store.namespace.hash,
          agent: { name: options.agentName ?? 'helper', version: 1 },
          cliVersion: '2.1.328',
          wardVersion: '0.1.0',
          exportedAt: new Date().toISOString(),
          uncertainRuns: options.uncertainRuns ?? [],
          anchoredSeq: 0,
        },
      },
      key,
      'readme\n',
    );
    return { file, key, conversationId: conversation.id, dir };
  } finally {
    core.close();
  }
}

/** The entries of a tar, in order. */
export function tarEntries(file: string): Array<[string, Buffer]> {
  const fd = fs.openSync(file, 'r');
  try {
    const layout = { files: Object.fromEntries(BUNDLE_FILES.map((name) => [name, { maxBytes: 1024 ** 3, required: false }])) };
    return [...readTarIndex(fd, fs.fstatSync(fd).size, layout, file).values()].map((entry) => [entry.name, readEntry(fd, entry)]);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes a tar of these entries (names as given, however odd). */
export function writeTar(file: string, entries: ReadonlyArray<readonly [string, Buffer]>): string {
  const fd = fs.openSync(file, 'w');
  try {
    const tar = new TarWriter(fd, new Date());
    for (const [name, data] of entries) tar.addFile(name, data);
    tar.finish();
  } finally {
    fs.closeSync(fd);
  }
  return file;
}

/** A copy of a bundle with its journal lines changed by `edit`. */
export function withLines(bundle: Pick<MadeBundle, 'file' | 'dir'>, edit: (lines: string[]) => string[], name = 'edited.wardbundle'): string {
  const entries = tarEntries(bundle.file).map(([entry, data]): [string, Buffer] => {
    if (entry !== 'journal.jsonl') return [entry, data];
    const lines = data.toString('utf8').split('\n').slice(0, -1);
    return [entry, Buffer.from(edit(lines).map((line) => `${line}\n`).join(''), 'utf8')];
  });
  return writeTar(path.join(bundle.dir, name), entries);
}

/** One line of journal.jsonl, as a test edits it. */
export type Line = { conversationId: string; seq: number; runId: string | null; type: string; createdAt: string; payload: string; prevHash: string; hash: string };

/** Recomputes every hash, as someone rewriting the journal would. */
export function rechain(lines: Line[]): string[] {
  let prev = '0'.repeat(64);
  return lines.map((line, index) => {
    const next = { ...line, seq: index + 1, prevHash: prev };
    next.hash = hashEvent(prev, next.conversationId, next.seq, next.runId, next.type, next.payload, next.createdAt);
    prev = next.hash;
    return JSON.stringify(next);
  });
}

/** What a statement says of its journal: filled in from the lines unless given. */
type JournalFacts = 'events' | 'firstSeq' | 'lastSeq' | 'chainHead';

/**
 * A bundle whose journal is exactly `lines` and whose statement says `predicate` (the journal's
 * own count and head filled in unless given), signed by `key`: what a signer with their own
 * tools could make.
 */
export function signedBundle(file: string, lines: readonly string[], predicate: Omit<Predicate, JournalFacts> & Partial<Pick<Predicate, JournalFacts>>, key: SigningKey): string {
  const journal = Buffer.from(lines.map((line) => `${line}\n`).join(''), 'utf8');
  const last = lines.length === 0 ? null : (JSON.parse(lines.at(-1)!) as Line);
  const statement = statementFor(createHash('sha256').update(journal).digest('hex'), null, {
    events: lines.length,
    firstSeq: lines.length === 0 ? null : 1,
    lastSeq: lines.length,
    chainHead: last?.hash ?? '0'.repeat(64),
    ...predicate,
  });
  const signed = envelope(Buffer.from(JSON.stringify(statement), 'utf8'), key);
  return writeTar(file, [
    ['journal.jsonl', journal],
    ['statement.dsse.json', Buffer.from(`${JSON.stringify(signed, null, 2)}\n`, 'utf8')],
    ['signer.pub.pem', Buffer.from(key.pem, 'utf8')],
    ['README.txt', Buffer.from('readme\n', 'utf8')],
  ]);
}
