/** E1, E4: a bundle checks out offline, and every way of changing one is named precisely. */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { envelope, generateSigningKey, loadSigningKey } from '../../main/export/signing.js';
import { openBundle, verifyBundle } from '../../main/export/bundle.js';
import { tempDir } from '../support/temp.js';
import { statementFor, type Predicate } from '../../main/export/statement.js';
import { makeBundle, rechain, signedBundle, tarEntries, withLines, writeTar, type Line } from './support.js';

const parse = (line: string) => JSON.parse(line) as Line;

describe('a bundle round trip', () => {
  it('test_verifies_offline_and_names_the_signer_and_what_the_statement_commits_to', async () => {
    const bundle = makeBundle(2);
    expect(tarEntries(bundle.file).map(([name]) => name)).toEqual(['journal.jsonl', 'events.sha256', 'statement.dsse.json', 'signer.pub.pem', 'README.txt']);
    const verdict = await verifyBundle(bundle.file, { expectedSigner: bundle.key.fingerprint });
    expect(verdict).toMatchObject({ ok: true, signature: 'valid', signer: bundle.key.fingerprint, events: 16, signedEvents: 16, firstBadSeq: null, problems: [] });
    expect(verdict.statement).toMatchObject({ conversationId: bundle.conversationId, events: 16, firstSeq: 1, lastSeq: 16, agent: { name: 'helper', version: 1 }, uncertainRuns: [] });
    // N1: the namespace is named by its hash only.
    expect(verdict.statement).not.toHaveProperty('namespace');
    expect(verdict.statement.namespaceHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('test_a_bundle_an_older_ward_signed_verifies_and_the_fingerprint_it_printed_still_names_its_signer', async () => {
    const bundle = makeBundle(1);
    // Older Wards printed SHA-256 over the key's DER form, and wrote it as the envelope's keyid.
    const der = bundle.key.key.export({ format: 'der', type: 'spki' });
    const printed = `SHA256:${createHash('sha256').update(der).digest('base64').replace(/=+$/, '')}`;
    expect(printed).not.toBe(bundle.key.fingerprint);
    const older = writeTar(
      path.join(bundle.dir, 'older.wardbundle'),
      tarEntries(bundle.file).map(([name, data]): [string, Buffer] => {
        if (name !== 'statement.dsse.json') return [name, data];
        const signed = JSON.parse(data.toString('utf8')) as { signatures: Array<{ keyid: string }> };
        return [name, Buffer.from(JSON.stringify({ ...signed, signatures: signed.signatures.map((entry) => ({ ...entry, keyid: printed })) }), 'utf8')];
      }),
    );
    expect(await verifyBundle(older)).toMatchObject({ ok: true, signature: 'valid', signer: bundle.key.fingerprint });
    expect(await verifyBundle(older, { expectedSigner: printed })).toMatchObject({ ok: true, signer: bundle.key.fingerprint, expectedSigner: bundle.key.fingerprint, problems: [] });
    expect(await verifyBundle(older, { expectedSigner: loadSigningKey(generateSigningKey()).legacyFingerprint })).toMatchObject({ ok: false });
  });

  it('test_a_v1_bundle_an_older_ward_wrote_without_the_event_list_still_verifies_as_a_whole', async () => {
    const bundle = makeBundle(2);
    const entries = new Map(tarEntries(bundle.file));
    // What Wards before the event list wrote: lines in their old field order, a v1 statement as JSON.stringify gave it.
    const FIELDS = ['conversationId', 'seq', 'runId', 'type', 'createdAt', 'payload', 'prevHash', 'hash'] as const;
    const oldLines = entries.get('journal.jsonl')!.toString('utf8').split('\n').slice(0, -1).map((line) => {
      const parsed = parse(line);
      return JSON.stringify(Object.fromEntries(FIELDS.map((field) => [field, parsed[field]])));
    });
    const { predicate } = JSON.parse(Buffer.from((JSON.parse(entries.get('statement.dsse.json')!.toString('utf8')) as { payload: string }).payload, 'base64').toString('utf8')) as { predicate: Predicate };
    const v1 = signedBundle(path.join(bundle.dir, 'v1.wardbundle'), oldLines, predicate, bundle.key);
    expect(tarEntries(v1).map(([name]) => name)).toEqual(['journal.jsonl', 'statement.dsse.json', 'signer.pub.pem', 'README.txt']);
    expect(await verifyBundle(v1, { expectedSigner: bundle.key.fingerprint })).toMatchObject({ ok: true, events: 16, signedEvents: 16, problems: [] });
    // Tampered, it is checked by its chain as before, and no event of it is shown as signed.
    const edited = signedBundle(path.join(bundle.dir, 'v1-edited.wardbundle'), oldLines, predicate, bundle.key);
    const tampered = withLines({ ...bundle, file: edited }, (lines) => lines.map((line, index) => (index === 4 ? line.replace('It is sunny', 'It is rainy') : line)), 'v1-tampered.wardbundle');
    expect(await verifyBundle(tampered)).toMatchObject({ ok: false, firstBadSeq: 5, signedEvents: 0, problems: ['event 5 was altered', 'journal.jsonl is not the file the statement commits to (its SHA-256 differs)'] });
  });

  it('test_an_edited_event_list_or_one_the_statement_does_not_cover_shows_no_event_as_signed', async () => {
    const bundle = makeBundle(1);
    const edited = writeTar(
      path.join(bundle.dir, 'list.wardbundle'),
      tarEntries(bundle.file).map(([name, data]): [string, Buffer] => [name, name === 'events.sha256' ? Buffer.from(data.toString('latin1').replace(/^./, (c) => (c === '0' ? '1' : '0')), 'latin1') : data]),
    );
    expect(await verifyBundle(edited)).toMatchObject({ ok: false, signedEvents: 0, problems: ['events.sha256 is not the list the statement commits to (its SHA-256 differs)'] });
    const dropped = writeTar(path.join(bundle.dir, 'no-list.wardbundle'), tarEntries(bundle.file).filter(([name]) => name !== 'events.sha256'));
    expect(await verifyBundle(dropped)).toMatchObject({ ok: false, signedEvents: 0, problems: ['the bundle has no events.sha256, which the statement commits to'] });
  });

  it('test_a_signed_event_list_with_a_line_that_is_not_hex_is_named_at_the_events_it_cannot_match', async () => {
    const bundle = makeBundle(1);
    const entries = tarEntries(bundle.file);
    const entry = (wanted: string) => entries.find(([name]) => name === wanted)![1];
    const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
    // Line 3 of the list is not hex, and the signer signed that list: only the events it names cannot match.
    const list = Buffer.from(entry('events.sha256'));
    list.write('Z', 65 * 2, 'latin1');
    const signed = JSON.parse(entry('statement.dsse.json').toString('utf8')) as { payload: string };
    const { predicate } = JSON.parse(Buffer.from(signed.payload, 'base64').toString('utf8')) as { predicate: Predicate };
    const statement = Buffer.from(JSON.stringify(statementFor(sha256(entry('journal.jsonl')), sha256(list), predicate)), 'utf8');
    const replaced: Record<string, Buffer> = { 'events.sha256': list, 'statement.dsse.json': Buffer.from(JSON.stringify(envelope(statement, bundle.key)), 'utf8') };
    const file = writeTar(path.join(bundle.dir, 'not-hex.wardbundle'), entries.map(([name, data]): [string, Buffer] => [name, replaced[name] ?? data]));
    const verdict = await verifyBundle(file);
    expect(verdict).toMatchObject({ ok: false, signature: 'valid', firstBadSeq: 3, signedEvents: 6 });
    expect(verdict.problems).toEqual([
      'event 3 cannot be matched: line 3 of events.sha256 is not a SHA-256 in hex',
      'event 4 cannot be matched: line 3 of events.sha256 is not a SHA-256 in hex',
    ]);
  });

  it('test_an_empty_conversation_exports_and_verifies_as_zero_events_at_the_genesis_hash', async () => {
    const bundle = makeBundle(0);
    const verdict = await verifyBundle(bundle.file);
    expect(verdict).toMatchObject({ ok: true, events: 0, statement: { events: 0, firstSeq: null, lastSeq: 0, chainHead: '0'.repeat(64) } });
  });

  it('test_a_conversation_with_an_uncertain_run_exports_and_the_statement_says_so', async () => {
    const bundle = makeBundle(1, { uncertainRuns: ['00000000-0000-4000-8000-0000000000aa'] });
    expect(await verifyBundle(bundle.file)).toMatchObject({ ok: true, statement: { uncertainRuns: ['00000000-0000-4000-8000-0000000000aa'] } });
  });

  it('test_reads_back_page_by_page_and_notices_a_bundle_changed_after_it_was_opened', async () => {
    const bundle = makeBundle(1);
    const opened = await openBundle(bundle.file);
    try {
      expect(opened.pageCount).toBe(1);
      expect((await opened.readPage(0)).map((entry) => entry.line?.type)).toEqual(['run_started', 'user_prompt', 'tool_call', 'tool_result', 'assistant_text', 'model_call', 'usage', 'run_finished']);
      const bytes = fs.readFileSync(bundle.file);
      const at = bytes.indexOf('It is sunny');
      bytes.write('It is rainy', at);
      fs.writeFileSync(bundle.file, bytes);
      await expect(opened.readPage(0)).rejects.toThrow(/changed after it was opened/);
    } finally {
      await opened.close();
    }
  });
  it('test_a_journal_over_several_read_chunks_reads_the_same_lines_by_pages_streamed_and_for_the_verdict', async () => {
    // Payloads of uneven length, so lines end at every offset and many straddle a 1 MiB read (issue 27's batched reader).
    const bundle = makeBundle(1, {
      after: (store, conversationId) =>
        store.journal.appendMany(conversationId, Array.from({ length: 3_000 }, (_, k) => journalEvent('assistant_text', { text: `${'é€😀x'.repeat(k % 97)} line ${k}` }))),
    });
    expect(fs.statSync(bundle.file).size).toBeGreaterThan(2 * 1024 * 1024);
    expect(await verifyBundle(bundle.file)).toMatchObject({ ok: true, events: 3_008, signedEvents: 3_008 });
    const streamed: string[] = [];
    const stream = { onChecked: () => true, onLine: ({ seq, text, signed }: { seq: number; text: string; signed: boolean }) => void streamed.push(`${seq} ${signed} ${text}`) };
    const viaStream = await openBundle(bundle.file, { stream });
    await viaStream.close();
    expect(viaStream.verdict.ok).toBe(true);
    const opened = await openBundle(bundle.file);
    try {
      const paged: string[] = [];
      for (let page = 0; page < opened.pageCount; page++) for (const { seq, text, signed } of await opened.readPage(page)) paged.push(`${seq} ${signed} ${text}`);
      const lines = tarEntries(bundle.file).find(([name]) => name === 'journal.jsonl')![1].toString('utf8').slice(0, -1).split('\n');
      expect(paged).toEqual(lines.map((line, index) => `${index + 1} true ${line}`));
      expect(streamed).toEqual(paged);
    } finally {
      await opened.close();
    }
  });
});

describe('a tampered bundle (E4)', () => {
  it('test_an_edited_event_is_named', async () => {
    const bundle = makeBundle(2);
    const file = withLines(bundle, (lines) => lines.map((line, index) => (index === 4 ? line.replace('It is sunny', 'It is rainy') : line)));
    expect(await verifyBundle(file)).toMatchObject({ ok: false, firstBadSeq: 5, signedEvents: 15, problems: ['event 5 is not what was signed', 'journal.jsonl is not the file the statement commits to (its SHA-256 differs)'] });
  });

  it('test_an_edited_event_with_the_chain_recomputed_is_named_exactly_and_the_events_after_it_still_match', async () => {
    const bundle = makeBundle(2);
    // Event 2 edited, then every hash after it recomputed: the chain is whole again, only the signed list knows.
    const file = withLines(bundle, (lines) => rechain(lines.map(parse).map((line, index) => (index === 1 ? { ...line, payload: line.payload.replace('Lisbon', 'Porto') } : line))));
    const verdict = await verifyBundle(file);
    expect(verdict).toMatchObject({ ok: false, firstBadSeq: 2, signedEvents: 15 });
    // The events after it are as signed; their lines' recomputed hashes are not, and that is said once.
    expect(verdict.problems).toEqual([
      'event 2 is not what was signed',
      "event 3 is as signed, but its line's prevHash or hash is not the signed one (the hash chain was broken or rewritten from there)",
      'journal.jsonl is not the file the statement commits to (its SHA-256 differs)',
    ]);
    const opened = await openBundle(file);
    try {
      expect((await opened.readPage(0)).filter((entry) => !entry.signed).map((entry) => entry.seq)).toEqual([2]);
    } finally {
      await opened.close();
    }
  });

  it('test_a_removed_event_is_named', async () => {
    const bundle = makeBundle(2);
    const file = withLines(bundle, (lines) => lines.filter((_, index) => index !== 2));
    const verdict = await verifyBundle(file);
    expect(verdict).toMatchObject({ ok: false, firstBadSeq: 3, signedEvents: 15 });
    expect(verdict.problems).toEqual(['event 3 is missing', 'the statement commits to 16 events, the journal has 15 lines', 'journal.jsonl is not the file the statement commits to (its SHA-256 differs)']);
  });

  it('test_reordered_events_are_reported_as_a_reorder_not_as_missing', async () => {
    const bundle = makeBundle(2);
    const file = withLines(bundle, (lines) => [lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)]);
    const verdict = await verifyBundle(file);
    // Every event is as signed, only not where it was.
    expect(verdict).toMatchObject({ ok: false, firstBadSeq: 2, signedEvents: 16 });
    expect(verdict.problems).toEqual(['the events were reordered: line 3 holds event 2, after event 3', 'journal.jsonl is not the file the statement commits to (its SHA-256 differs)']);
  });

  it('test_an_appended_event_even_with_a_valid_chain_is_not_covered_by_the_statement', async () => {
    const bundle = makeBundle(1);
    const file = withLines(bundle, (lines) => {
      const parsed = lines.map(parse);
      return rechain([...parsed, { ...parsed[4]!, payload: JSON.stringify({ text: 'added later' }) }]);
    });
    expect(await verifyBundle(file)).toMatchObject({
      ok: false,
      firstBadSeq: 9,
      signedEvents: 8,
      problems: ['event 9 is not covered by the statement, which commits to 8 events (events were appended)', 'the statement commits to 8 events, the journal has 9 lines', 'journal.jsonl is not the file the statement commits to (its SHA-256 differs)'],
    });
  });

  it('test_a_journal_line_that_is_not_json_is_named', async () => {
    const bundle = makeBundle(1);
    const file = withLines(bundle, (lines) => lines.map((line, index) => (index === 3 ? line.slice(0, 40) : line)));
    expect(await verifyBundle(file)).toMatchObject({ ok: false, firstBadSeq: 4, signedEvents: 7, problems: expect.arrayContaining(['event 4 is not what was signed: line 4 is not JSON (event 4 is unreadable)']) });
  });

  it('test_a_statement_signed_by_another_key_fails_against_the_bundle_key_and_against_the_expected_signer', async () => {
    const bundle = makeBundle(1);
    const other = loadSigningKey(generateSigningKey());
    const entries = tarEntries(bundle.file);
    const statement = JSON.parse(entries[2]![1].toString('utf8')) as { payload: string };
    const resigned = Buffer.from(JSON.stringify(envelope(Buffer.from(statement.payload, 'base64'), other)), 'utf8');
    // Re-signed, with the original public key still in the bundle: the signature does not verify.
    const keptKey = writeTar(path.join(bundle.dir, 'kept-key.wardbundle'), entries.map(([name, data]) => [name, name === 'statement.dsse.json' ? resigned : data]));
    // Nothing of it is shown as signed: no event is held against a list no one can vouch for.
    expect(await verifyBundle(keptKey)).toMatchObject({ ok: false, signature: 'invalid', signedEvents: 0, problems: [expect.stringContaining("signature does not verify with the bundle's key")] });
    // Re-signed and the key swapped for the forger's: it verifies as the forger's, and fails against the signer the reader expects.
    const swapped = writeTar(
      path.join(bundle.dir, 'swapped.wardbundle'),
      entries.map(([name, data]) => [name, name === 'statement.dsse.json' ? resigned : name === 'signer.pub.pem' ? Buffer.from(other.pem) : data]),
    );
    expect(await verifyBundle(swapped)).toMatchObject({ ok: true, signer: other.fingerprint });
    expect(await verifyBundle(swapped, { expectedSigner: bundle.key.fingerprint })).toMatchObject({
      ok: false,
      signedEvents: 0,
      problems: [`the bundle is signed by ${other.fingerprint}, not by the expected signer ${bundle.key.fingerprint}`],
    });
  });
});

describe('a bundle that is not one (E4: nothing is followed, nothing is written)', () => {
  function gnuTar(dir: string, args: string[]): string {
    const file = path.join(dir, 'crafted.wardbundle');
    execFileSync('tar', ['-cf', file, ...args], { cwd: dir });
    return file;
  }

  it('test_a_truncated_bundle_is_refused_as_truncated', async () => {
    const bundle = makeBundle(1);
    const bytes = fs.readFileSync(bundle.file);
    for (const cut of [bytes.length - 1024, 700, 300]) {
      const file = path.join(bundle.dir, `cut-${cut}.wardbundle`);
      fs.writeFileSync(file, bytes.subarray(0, cut));
      await expect(verifyBundle(file)).rejects.toMatchObject({ code: 'bundle_invalid', message: expect.stringContaining('truncated') });
    }
  });

  it('test_path_traversal_names_symlinks_and_extra_files_are_refused_by_name', async () => {
    const bundle = makeBundle(1);
    const dir = tempDir();
    for (const [name, data] of tarEntries(bundle.file)) fs.writeFileSync(path.join(dir, name), data);
    const traversal = gnuTar(dir, ['--transform', 's,^journal,../journal,', 'journal.jsonl', 'events.sha256', 'statement.dsse.json', 'signer.pub.pem', 'README.txt']);
    await expect(verifyBundle(traversal)).rejects.toThrow('entry "../journal.jsonl" climbs out of its folder (path traversal)');

    fs.renameSync(path.join(dir, 'README.txt'), path.join(dir, 'real-readme'));
    fs.symlinkSync('/etc/passwd', path.join(dir, 'README.txt'));
    const symlink = gnuTar(dir, ['journal.jsonl', 'events.sha256', 'statement.dsse.json', 'signer.pub.pem', 'README.txt']);
    await expect(verifyBundle(symlink)).rejects.toThrow('entry "README.txt" is a symbolic link; a bundle holds regular files only');

    const extra = writeTar(path.join(dir, 'extra.wardbundle'), [...tarEntries(bundle.file), ['notes.txt', Buffer.from('hello')]]);
    await expect(verifyBundle(extra)).rejects.toThrow('it holds an unexpected file "notes.txt"');
    const missing = writeTar(path.join(dir, 'missing.wardbundle'), tarEntries(bundle.file).slice(0, 4));
    await expect(verifyBundle(missing)).rejects.toThrow('it has no README.txt');
    // Nothing was extracted or written anywhere: the folder holds what the test put there.
    expect(fs.readdirSync(dir).sort()).toEqual(['README.txt', 'crafted.wardbundle', 'events.sha256', 'extra.wardbundle', 'journal.jsonl', 'missing.wardbundle', 'real-readme', 'signer.pub.pem', 'statement.dsse.json']);
  });

  it('test_a_file_that_is_not_a_tar_and_one_over_the_size_bound_are_refused', async () => {
    const dir = tempDir();
    const garbage = path.join(dir, 'garbage.wardbundle');
    fs.writeFileSync(garbage, Buffer.alloc(4096, 7));
    await expect(verifyBundle(garbage)).rejects.toThrow('the header at byte 0 is not a tar header');
    const huge = path.join(dir, 'huge.wardbundle');
    fs.writeFileSync(huge, '');
    fs.truncateSync(huge, 1024 ** 3 + 1);
    await expect(verifyBundle(huge)).rejects.toThrow(`it is ${1024 ** 3 + 1} bytes; bundles are at most ${1024 ** 3} bytes (1 GiB)`);
  });
});
