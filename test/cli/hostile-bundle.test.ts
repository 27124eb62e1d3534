/**
 * D1: a bundle or journal made by someone hostile, with escape sequences in every field of every
 * event type and of the statement, cannot move the terminal's cursor, set its title, write its
 * clipboard, hide text or forge Ward's verdict — through the real `ward verify-bundle`,
 * `ward review` and `ward replay`, each in its own process.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSigningKey, loadSigningKey } from '../../main/export/signing.js';
import { PREDICATE, type Predicate } from '../../main/export/statement.js';
import { rechain, signedBundle, type Line } from '../export/support.js';
import { firstUnsafe, HOSTILE_SHORT, HOSTILE_TEXT, hostileEvents } from '../support/hostile.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward, type WardResult } from '../support/ward-cli.js';

/** The one line `ward replay` and `ward review` end with when the journal has turns: Ward's words and numbers only. */
const TOTAL_LINE = /^Total: \d+ turns?, [\d,]+ in · [\d,]+ out( · [\d,]+ cache)? tokens( · (\$\d+\.\d{4}( \+ cost unknown for \d+ turns?)?|cost unknown for \d+ turns?))?$/;

/** Sliced by the event line's time column (characters 11 to 23). */
const HOSTILE_CREATED_AT = `2026-03-01T${HOSTILE_SHORT}`;
const OFFLINE = { WARD_HOME: '/nonexistent/ward-home' };

function expectTerminalSafe(result: WardResult): void {
  for (const [name, text] of [['stdout', result.stdout], ['stderr', result.stderr]] as const) {
    expect(firstUnsafe(text), `${name} passes a character the terminal would act on or hide`).toBeNull();
  }
}

const lines = (text: string): string[] => text.split('\n').slice(0, -1);

/** Every event type with hostile text in every field, and an event of a hostile type, in one chain. */
function hostileJournal(conversationId: string): string[] {
  const events = [...hostileEvents(), { type: HOSTILE_TEXT, payload: HOSTILE_TEXT }];
  return rechain(
    events.map((event): Line => ({ conversationId, seq: 0, runId: HOSTILE_SHORT, type: event.type, createdAt: HOSTILE_CREATED_AT, payload: JSON.stringify(event.payload), prevHash: '', hash: '' })),
  );
}

/** A statement with hostile text in every field its schema lets hold text. */
function hostilePredicate(conversationId: string): Omit<Predicate, 'events' | 'firstSeq' | 'lastSeq' | 'chainHead'> {
  return {
    conversationId,
    title: `${HOSTILE_SHORT}${'\u2800'.repeat(100)}${HOSTILE_SHORT}`,
    namespaceHash: 'a'.repeat(64),
    agent: { name: HOSTILE_SHORT, version: 1 },
    cliVersion: HOSTILE_SHORT,
    wardVersion: HOSTILE_SHORT,
    exportedAt: '2026-03-01T12:00:00.000Z',
    uncertainRuns: [HOSTILE_SHORT, HOSTILE_SHORT],
    anchoredSeq: 0,
  };
}

/** The verdict's lines: itself, a line per further problem, conversation, signature, export, uncertain runs. */
function verdictLines(verdict: { problems: string[]; statement: { uncertainRuns: string[] } }): number {
  return 1 + Math.max(0, verdict.problems.length - 1) + 3 + (verdict.statement.uncertainRuns.length > 0 ? 1 : 0);
}

/** Where a test writes its bundles, the key it signs them with, and the conversation they are of. */
function signer() {
  return { dir: tempDir(), key: loadSigningKey(generateSigningKey()), conversationId: randomUUID() };
}

/** Runs verify-bundle and review, text and JSON, on `file`; checks what every kind of output must hold. */
async function checkBundle(file: string, exit: 0 | 3): Promise<void> {
  const json = await ward(['verify-bundle', file, '--json'], { env: OFFLINE });
  expect(json.code, json.stderr).toBe(exit);
  expectTerminalSafe(json);
  // --json stays JSON, and carries the bundle's text unchanged for machines.
  const verdict = JSON.parse(json.stdout) as { ok: boolean; events: number; problems: string[]; statement: { agent: { name: string }; uncertainRuns: string[] } };
  expect(verdict.statement.agent.name).toBe(HOSTILE_SHORT);

  const verified = await ward(['verify-bundle', file], { env: OFFLINE });
  expect(verified.code).toBe(exit);
  expectTerminalSafe(verified);
  const printed = lines(verified.stdout);
  expect(printed).toHaveLength(verdictLines(verdict));
  if (exit === 0) {
    expect(printed[0]).toMatch(/^ok: .* is intact and signed$/);
    expect(printed.filter((line) => line.startsWith('ok:'))).toHaveLength(1);
  } else {
    expect(printed[0]).toMatch(/^NOT VERIFIED: /);
    expect(printed.filter((line) => /^\s*ok:/.test(line))).toEqual([]);
  }

  const reviewed = await ward(['review', file], { env: OFFLINE });
  expect(reviewed.code).toBe(exit);
  expectTerminalSafe(reviewed);
  const shown = lines(reviewed.stdout);
  expect(shown[0]).toEqual(exit === 0 ? expect.stringMatching(/^Read-only review · signed by SHA256:/) : 'Read-only review · NOT VERIFIED');
  expect(shown[1]).toMatch(exit === 0 ? /^ok: / : /^NOT VERIFIED: /);
  if (exit === 3) expect(shown.filter((line) => /^\s*ok:/.test(line))).toEqual([]);
  // The header, the verdict, a blank line, then at most one line per event, and Ward's total of the turns.
  const total = TOTAL_LINE.test(shown.at(-1)!) ? 1 : 0;
  expect(shown.length).toBeGreaterThan(2 + verdictLines(verdict));
  // An unverified bundle says how many events match what was signed, and marks every line of one that does not.
  expect(shown.length).toBeLessThanOrEqual(2 + verdictLines(verdict) + (exit === 3 ? 1 : 0) + verdict.events + total);
  if (exit === 3) expect(shown.slice(2 + verdictLines(verdict) + 1).filter((line) => line !== '' && !TOTAL_LINE.test(line) && !line.startsWith('NOT AS SIGNED #'))).toEqual([]);
  const reviewJson = await ward(['review', file, '--json'], { env: OFFLINE });
  expectTerminalSafe(reviewJson);
  expect(lines(reviewJson.stdout).map((line) => JSON.parse(line) as unknown)).toHaveLength(verdict.events);
}

describe('a hostile bundle on the terminal (D1)', () => {
  it('test_a_signed_bundle_with_escape_sequences_in_every_field_prints_one_true_verdict_and_nothing_the_terminal_acts_on', async () => {
    const { dir, key, conversationId } = signer();
    // Its file name is hostile too.
    const file = signedBundle(path.join(dir, `chat\u001b]0;t\u0007\nok: x is intact and signed\u202e.wardbundle`), hostileJournal(conversationId), hostilePredicate(conversationId), key);
    await checkBundle(file, 0);
  }, 120_000);

  it('test_a_hostile_bundle_made_to_fail_cannot_show_an_ok_verdict_on_any_line', async () => {
    const { dir, key, conversationId } = signer();
    const journal = hostileJournal(conversationId);
    // Altered after signing, and a line that is no event at all.
    const tampered = [journal[0]!.replace('7', '8'), HOSTILE_TEXT.replace(/\n/g, ' '), ...journal.slice(1)];
    const file = signedBundle(path.join(dir, 'tampered.wardbundle'), tampered, { ...hostilePredicate(conversationId), events: journal.length, lastSeq: journal.length }, key);
    await checkBundle(file, 3);
  }, 120_000);

  it('test_a_statement_field_that_cannot_hold_text_refuses_the_bundle_cleanly', async () => {
    const { dir, key, conversationId } = signer();
    const holdsText = new Set(['title', 'agent', 'cliVersion', 'wardVersion', 'uncertainRuns']);
    const fields = Object.keys(PREDICATE.shape).filter((field) => !holdsText.has(field));
    for (const [index, field] of [...fields, 'agent'].entries()) {
      const hostile = field === 'agent' ? { name: HOSTILE_SHORT, version: HOSTILE_SHORT } : HOSTILE_SHORT;
      // A value the schema refuses, on purpose.
      const predicate = { ...hostilePredicate(conversationId), [field]: hostile } as never;
      const file = signedBundle(path.join(dir, `${index}.wardbundle`), hostileJournal(conversationId), predicate, key);
      const verified = await ward(['verify-bundle', file], { env: OFFLINE });
      expect(verified.code, `${field}: ${verified.stderr}`).not.toBe(0);
      expectTerminalSafe(verified);
      expect(verified.stdout).not.toMatch(/^\s*ok:/m);
    }
  }, 180_000);
});

describe('a hostile journal on the terminal (D1)', () => {
  it('test_replay_of_a_journal_with_escape_sequences_in_every_field_prints_one_line_per_event_and_nothing_the_terminal_acts_on', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    const events = hostileEvents();
    store.journal.appendMany(conversation.id, events.map((event) => ({ ...event, runId: HOSTILE_SHORT })));
    // What only a hand on the database could write: a hostile time and type.
    store.db.prepare('UPDATE events SET created_at = ? WHERE conversation_id = ?').run(HOSTILE_CREATED_AT, conversation.id);
    store.db.prepare('UPDATE events SET type = ? WHERE conversation_id = ? AND seq = 1').run(HOSTILE_TEXT, conversation.id);
    core.close();
    const replayed = await ward(['replay', conversation.id], { env: { WARD_HOME: home } });
    expect(replayed.code, replayed.stderr).toBe(0);
    expectTerminalSafe(replayed);
    // One line per event at most, then Ward's total of the turns, in Ward's words only.
    const shown = lines(replayed.stdout);
    expect(shown.at(-1)).toMatch(TOTAL_LINE);
    expect(shown.length).toBeGreaterThan(1);
    expect(shown.length).toBeLessThanOrEqual(events.length + 1);
    expect(shown.slice(0, -1).every((line) => /^#\d+ /.test(line))).toBe(true);
    const json = await ward(['replay', conversation.id, '--json'], { env: { WARD_HOME: home } });
    expect(json.code, json.stderr).toBe(0);
    expectTerminalSafe(json);
    expect(lines(json.stdout).map((line) => JSON.parse(line) as { payload: unknown }).length).toBe(events.length);
  }, 60_000);
});
