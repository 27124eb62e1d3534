/** Issue 12 #8, #10: a damaged or emptied namespace database is refused by name and never written; what Ward creates is private. */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { namespaceDatabasePath } from '../../main/store/namespace-store.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';

const digest = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** A default namespace with a few conversations' worth of journal, closed cleanly. */
async function seededHome(): Promise<{ home: string; file: string }> {
  const home = tempDir('ward-damaged-');
  const created = await ward(['namespace', 'create', 'work'], { env: { WARD_HOME: home } });
  expect(created.code).toBe(0);
  const file = namespaceDatabasePath(home, parseNamespace('work'));
  return { home, file };
}

/** Overwrites the start of one page (1-based, 4096-byte pages; page 1 after the file header) with noise. */
function scramblePage(file: string, page: number): void {
  const bytes = fs.readFileSync(file);
  const start = page === 1 ? 100 : (page - 1) * 4096;
  for (let i = start; i < Math.min(start + 2000, bytes.length); i++) bytes[i] = (i * 131 + 7) & 0xff;
  fs.writeFileSync(file, bytes);
}

/** Gives one page (not page 1) a b-tree page type that does not exist: SQLite reports the file corrupt when a query reaches it. */
function breakPageType(file: string, page: number): void {
  const bytes = fs.readFileSync(file);
  bytes[(page - 1) * 4096] = 0xff;
  fs.writeFileSync(file, bytes);
}

describe('damaged databases', () => {
  it('test_an_emptied_database_is_refused_with_exit_4_naming_the_file_and_is_not_recreated', async () => {
    const { home, file } = await seededHome();
    fs.writeFileSync(file, '');
    const result = await ward(['conversations', '--namespace', 'work'], { env: { WARD_HOME: home } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(file);
    expect(result.stderr).toMatch(/is empty \(0 bytes\)/);
    expect(fs.statSync(file).size).toBe(0);
  });

  it('test_noise_in_an_early_page_is_refused_with_exit_4_naming_the_file_and_left_untouched', async () => {
    const { home, file } = await seededHome();
    scramblePage(file, 2);
    const before = digest(file);
    const result = await ward(['conversations', '--namespace', 'work'], { env: { WARD_HOME: home } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(file);
    expect(digest(file)).toBe(before);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });

  it('test_noise_in_a_later_page_is_found_before_a_run_writes_into_the_file', async () => {
    const { home, file } = await seededHome();
    const pages = fs.statSync(file).size / 4096;
    scramblePage(file, pages);
    const before = digest(file);
    const result = await ward(['run', '--namespace', 'work', '--new', '--', 'hello'], { env: { WARD_HOME: home } });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(file);
    expect(result.stderr).toMatch(/damaged/);
    expect(digest(file)).toBe(before);
  });

  /** A journal of `events` events of ~2 KB each, so damage can sit among its events, past what an open reads. */
  async function homeWithJournal(events: number): Promise<{ home: string; file: string; conversationId: string; midLeafPage: number }> {
    const { home, file } = await seededHome();
    const { core, store, conversation } = seedConversation(home, 'work');
    store.journal.appendMany(conversation.id, Array.from({ length: events }, (_, i) => ({ type: 'assistant_text', payload: { text: `${i} ${'x'.repeat(2000)}` } })));
    store.db.pragma('wal_checkpoint(TRUNCATE)');
    const leaves = store.db.prepare<[], { pageno: number }>("SELECT pageno FROM dbstat WHERE name = 'events' AND pagetype = 'leaf' ORDER BY pageno").all();
    core.close();
    return { home, file, conversationId: conversation.id, midLeafPage: leaves[Math.floor(leaves.length / 2)]!.pageno };
  }

  // Half-way the damage read as tampering (exit 3), further on as an unexpected error (exit 1).
  it.each([0.5, 0.8])('test_verify_of_a_journal_damaged_mid_file_exits_4_naming_the_file (at %s of the file)', async (at) => {
    const { home, file, conversationId } = await homeWithJournal(400);
    scramblePage(file, Math.floor((fs.statSync(file).size / 4096) * at));
    const before = digest(file);
    const result = await ward(['verify', conversationId, '--namespace', 'work'], { env: { WARD_HOME: home } });
    expect(result).toMatchObject({ code: 4, stdout: '' });
    expect(result.stderr).toContain(file);
    expect(result.stderr).toMatch(/damaged/);
    expect(digest(file)).toBe(before);
  });

  it('test_damage_a_query_meets_in_a_large_database_checked_today_exits_4_not_as_an_unexpected_error', async () => {
    // Over 16 MiB, and checked at this open: the next opens skip the whole-file check for a day.
    const { home, file, conversationId, midLeafPage } = await homeWithJournal(9000);
    new DataFolder(home).store(parseNamespace('work')).close();
    breakPageType(file, midLeafPage);
    const result = await ward(['verify', conversationId, '--namespace', 'work'], { env: { WARD_HOME: home } });
    expect(result).toMatchObject({ code: 4, stdout: '' });
    expect(result.stderr).toMatch(/^ward verify: a database file is corrupt \(database disk image is malformed\); it was left untouched\n$/);
  });

  it('test_every_file_ward_creates_is_0600_and_every_folder_0700', async () => {
    const { home } = await seededHome();
    await ward(['conversations', '--namespace', 'work'], { env: { WARD_HOME: home } });
    const loose: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        const mode = fs.statSync(full).mode & 0o777;
        if (entry.isDirectory()) {
          if (mode !== 0o700) loose.push(`${full} ${mode.toString(8)}`);
          walk(full);
        } else if (mode !== 0o600) loose.push(`${full} ${mode.toString(8)}`);
      }
    };
    walk(home);
    expect(loose).toEqual([]);
  });
});
