/**
 * E4: a bundle `ward export` wrote, tampered with in each way a reviewer must tell apart, through
 * the real `ward verify-bundle` and `ward review`: the first event not as signed is named exactly,
 * a reorder is a reorder, and review marks every line it could not match under a NOT VERIFIED banner.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendTurn, rechain, withLines, type Line } from '../export/support.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

const bus = process.env.DBUS_SESSION_BUS_ADDRESS;
const OFFLINE = { WARD_HOME: path.join(tempDir(), 'never-made') };
const parse = (line: string) => JSON.parse(line) as Line;

/** A real export of two turns (16 events), as `ward export` writes it. */
async function exported() {
  expect(bus, 'run through scripts/with-test-services.mjs (the signing key is in the keychain)').toBeTruthy();
  const home = tempDir();
  const { core, store, conversation } = seedConversation(home);
  appendTurn(store, conversation.id, '00000000-0000-4000-8000-000000000001', 'It is sunny in Lisbon.', 0.002);
  appendTurn(store, conversation.id, '00000000-0000-4000-8000-000000000002', 'Still sunny.', 0.005);
  core.close();
  const dir = tempDir();
  const file = path.join(dir, 'chat.wardbundle');
  const result = await ward(['export', conversation.id, '--out', file], { env: { WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: bus } });
  expect(result.code, result.stderr).toBe(0);
  return { file, dir };
}

/** The banner of a bundle whose statement, signer and list hold, shown before its journal is read: no signer, nothing trusted yet. */
const NOT_YET_VERIFIED_BANNER = [
  'Read-only review · NOT YET VERIFIED · the verdict follows the last event',
  '  each event is held against the signed list of event hashes as it is shown; one that is not is marked "NOT AS SIGNED"',
  '  whether the journal is whole, in order and the file signed, and by whom, is known after the last event: nothing above the verdict there is verified',
  '',
];

/** The event lines of a review, without the banner and verdict. */
const eventLines = (stdout: string): string[] => stdout.split('\n').filter((line) => /^(NOT AS SIGNED )?#\d+ /.test(line));

describe('ward review and verify-bundle of a tampered export (E4)', () => {
  it('test_event_2_edited_and_the_chain_recomputed_is_named_as_event_2_and_only_its_line_is_marked', async () => {
    const bundle = await exported();
    const file = withLines(bundle, (lines) => rechain(lines.map(parse).map((line, index) => (index === 1 ? { ...line, payload: line.payload.replace('Lisbon', 'Porto') } : line))));
    const verified = await ward(['verify-bundle', file], { env: OFFLINE });
    expect(verified.code).toBe(3);
    expect(verified.stdout.split('\n')[0]).toBe('NOT VERIFIED: first bad event is #2: event 2 is not what was signed');

    const review = await ward(['review', file], { env: OFFLINE });
    expect(review.code).toBe(3);
    const shown = review.stdout.split('\n');
    // Shown as it is read: NOT YET VERIFIED before any event (the journal is not read yet), each event marked as it is
    // checked, and the verdict naming event 2 after them.
    expect(shown.slice(0, 4)).toEqual(NOT_YET_VERIFIED_BANNER);
    const verdictAt = shown.indexOf('NOT VERIFIED: first bad event is #2: event 2 is not what was signed');
    expect(verdictAt).toBeGreaterThan(shown.findLastIndex((line) => /^(NOT AS SIGNED )?#\d+ /.test(line)));
    expect(shown.slice(verdictAt)).toContain('  15 of 16 events could be matched to what was signed; every other line is marked "NOT AS SIGNED"');
    const events = eventLines(review.stdout);
    expect(events).toHaveLength(16);
    expect(events.filter((line) => line.startsWith('NOT AS SIGNED '))).toEqual([expect.stringMatching(/^NOT AS SIGNED #2 \S+ user_prompt {2}.*Porto/)]);
  });

  it('test_a_signed_bundle_with_a_broken_hash_chain_shows_no_signer_before_its_verdict_which_names_the_first_bad_event', async () => {
    const bundle = await exported();
    // Event 5's content is as signed; its line's hash is not, so the chain breaks there and journal.jsonl is not the file signed.
    const file = withLines(bundle, (lines) => lines.map((line, index) => (index === 4 ? JSON.stringify({ ...parse(line), hash: 'f'.repeat(64) }) : line)));
    const verdict = 'NOT VERIFIED: first bad event is #5: event 5 is as signed, but its line\'s prevHash or hash is not the signed one (the hash chain was broken or rewritten from there)';
    const verified = await ward(['verify-bundle', file], { env: OFFLINE });
    expect(verified.code).toBe(3);
    expect(verified.stdout.split('\n')[0]).toBe(verdict);

    const review = await ward(['review', file], { env: OFFLINE });
    expect(review.code).toBe(3);
    const shown = review.stdout.split('\n');
    // Nothing under a trust heading before the verdict: no "signed by" above it, and the verdict after the last event names event 5.
    expect(shown.slice(0, 4)).toEqual(NOT_YET_VERIFIED_BANNER);
    const verdictAt = shown.indexOf(verdict);
    expect(verdictAt).toBeGreaterThan(shown.findLastIndex((line) => /^(NOT AS SIGNED )?#\d+ /.test(line)));
    expect(shown.slice(0, verdictAt).filter((line) => /signed by|PROVISIONAL/i.test(line))).toEqual([]);
    expect(shown).toContain('  also: journal.jsonl is not the file the statement commits to (its SHA-256 differs)');
  });

  it('test_a_reorder_is_reported_as_a_reorder_and_a_removed_event_as_missing', async () => {
    const bundle = await exported();
    const reordered = withLines(bundle, (lines) => [lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)], 'reordered.wardbundle');
    const verdict = await ward(['verify-bundle', reordered], { env: OFFLINE });
    expect(verdict.stdout.split('\n')[0]).toBe('NOT VERIFIED: first bad event is #2: the events were reordered: line 3 holds event 2, after event 3');
    expect(verdict.stdout).not.toMatch(/missing/);
    // Every event is one that was signed, only out of place: none is marked.
    expect(eventLines((await ward(['review', reordered], { env: OFFLINE })).stdout).filter((line) => line.startsWith('NOT AS SIGNED'))).toEqual([]);

    const removed = withLines(bundle, (lines) => lines.filter((_, index) => index !== 2), 'removed.wardbundle');
    expect((await ward(['verify-bundle', removed], { env: OFFLINE })).stdout.split('\n')[0]).toBe('NOT VERIFIED: first bad event is #3: event 3 is missing');
  });

  it('test_checked_against_a_signer_it_was_not_signed_by_no_event_is_shown_as_signed', async () => {
    const bundle = await exported();
    const review = await ward(['review', bundle.file, '--signer', `SHA256:${'A'.repeat(43)}`], { env: OFFLINE });
    expect(review.code).toBe(3);
    expect(review.stdout.split('\n')[0]).toBe('Read-only review · NOT VERIFIED');
    expect(review.stdout).toContain('  no event could be matched to what was signed; every line is marked "NOT AS SIGNED"');
    const events = eventLines(review.stdout);
    expect(events).toHaveLength(16);
    expect(events.every((line) => line.startsWith('NOT AS SIGNED #'))).toBe(true);
  });
});
