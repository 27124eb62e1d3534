/**
 * Code and diffs read like an editor (issues 26 and 31) in real Chromium under Ward's CSP: code
 * blocks highlighted with the languages Ward registers, hostile code inert; a turn's changed files
 * (tracked by the real change tracker) in the diff viewer, undone through the real ChangeService.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { RUN_STARTED } from '../support/events.js';
import { seedChangedRun } from './harness/changes.js';
import { seedConversation, timelineOf, useUiSuite, type UiHarness } from './harness/harness.js';
import { auditScreen } from './harness/axe.js';

/** Chromium animates a keyboard scroll (Home, End); on a loaded machine (a whole test run) it took longer than expect.poll's default second. */
const KEYBOARD_SCROLL = { timeout: 10_000 };

const suite = useUiSuite();
let harness: UiHarness | undefined;

const HOSTILE_CODE = [
  '```html',
  '<img src=x onerror="window.__pwned = 1"><script>window.__pwned = 2</script>',
  '<a href="javascript:window.__pwned=3">x</a> \u001b[31mred\u001b[0m \u202Eevil',
  '```',
  '',
  '```ts',
  'const ward: string = "safe"; // a comment',
  '```',
  '',
  '```klingon',
  'qaStaH nuq <b>bold</b>',
  '```',
].join('\n');

describe('code in real Chromium', () => {
  it('test_code_blocks_are_highlighted_in_registered_languages_plain_otherwise_and_hostile_code_stays_inert', async () => {
    harness = await suite.start();
    const conversation = seedConversation(harness, 'Code blocks');
    const runId = '00000000-0000-4000-8000-000000000026';
    harness.core.store(harness.ns).journal.appendMany(
      conversation.id,
      [journalEvent('run_started', RUN_STARTED), journalEvent('user_prompt', { text: 'code please' }), journalEvent('assistant_text', { text: HOSTILE_CODE }), journalEvent('run_finished', { state: 'succeeded', reason: null })].map((event) => ({ ...event, runId })),
    );
    const page = await harness.open();
    const errors: string[] = [];
    page.on('console', (message) => {
      // (The page's favicon 404 is not about code.)
      if (message.type() === 'error' && !message.text().includes('404')) errors.push(message.text());
    });
    await page.getByRole('button', { name: /Code blocks/ }).click();
    await timelineOf(page).getByText('qaStaH nuq').waitFor();

    const blocks = page.locator('.code-block');
    await expect(blocks.count()).resolves.toBe(3);
    // TypeScript: keywords, types, strings and comments are coloured spans of the same text.
    const ts = blocks.nth(1).locator('code');
    await expect(ts.textContent()).resolves.toBe('const ward: string = "safe"; // a comment');
    await expect(ts.locator('.hl-keyword').first().textContent()).resolves.toBe('const');
    await expect(ts.locator('.hl-string').textContent()).resolves.toBe('"safe"');
    await expect(ts.locator('.hl-comment').textContent()).resolves.toBe('// a comment');
    // HTML is highlighted as text: tags are spans, nothing is an element, no handler ran.
    const html = blocks.nth(0).locator('code');
    await expect(html.locator('.hl-name').count()).resolves.toBeGreaterThan(0);
    await expect(page.locator('img, iframe, .markdown script, .markdown b, .markdown a').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).resolves.toBeUndefined();
    const shown = (await html.textContent())!;
    expect(shown).toContain('<img src=x onerror="window.__pwned = 1">');
    // The escape sequence is dropped and the bidi override becomes a visible mark (D1).
    expect(shown).not.toContain('\u001b');
    expect(shown).not.toContain('\u202E');
    expect(shown).toContain('red');
    // An unknown language is plain, escaped text.
    const plain = blocks.nth(2).locator('code');
    await expect(plain.textContent()).resolves.toBe('qaStaH nuq <b>bold</b>');
    await expect(plain.locator('span').count()).resolves.toBe(0);
    // Highlighting broke no CSP rule (an eval or an inline style would be reported here).
    expect(errors).toEqual([]);
  });
});

const CANARY = 'deny-read-canary-e2e-71c3a9f0';

describe('file changes in real Chromium', () => {
  it('test_a_turn_shows_its_changed_files_the_viewer_opens_by_keyboard_shows_highlighted_diffs_and_deny_read_bytes_never_reach_the_window', async () => {
    harness = await suite.start();
    const dir = suite.tempDir('ward-e2e-changes-');
    fs.writeFileSync(path.join(dir, 'app.ts'), 'export const answer = 41;\n');
    fs.writeFileSync(path.join(dir, 'old.txt'), 'to be removed\n');
    fs.writeFileSync(path.join(dir, '.env'), `TOKEN=${CANARY}-before\n`);
    await seedChangedRun(harness, 'Changed files', dir, () => {
      fs.writeFileSync(path.join(dir, 'app.ts'), 'export const answer = 42;\n// checked\n');
      fs.rmSync(path.join(dir, 'old.txt'));
      fs.writeFileSync(path.join(dir, 'notes.md'), 'new notes\n');
      fs.writeFileSync(path.join(dir, '.env'), `TOKEN=${CANARY}-after\n`);
    });
    const page = await harness.open();
    await page.getByRole('button', { name: /Changed files/ }).click();
    const summary = timelineOf(page).getByRole('button', { name: '4 files changed (1 added, 2 modified, 1 deleted)' });
    await summary.waitFor();

    // Keyboard: the summary opens the viewer, focus lands on the file list, arrows move, Escape closes.
    await summary.focus();
    await page.keyboard.press('Enter');
    const viewer = page.getByRole('dialog', { name: '4 files changed (1 added, 2 modified, 1 deleted)' });
    await viewer.waitFor();
    const files = viewer.getByRole('list', { name: 'Changed files' }).getByRole('button');
    await expect.poll(() => files.allTextContents()).toEqual(['modified.envcontent not kept', 'modifiedapp.ts+2 −1', 'addednotes.md+1 −0', 'deletedold.txt+0 −1']);
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('modified.envcontent not kept');
    await expect(viewer.getByTestId('diff-not-kept').textContent()).resolves.toBe('Content not kept (deny-read): Ward records this file by its size and hash only.');
    await page.keyboard.press('ArrowDown');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('modifiedapp.ts+2 −1');
    const diff = viewer.getByTestId('diff-lines');
    await expect.poll(() => diff.locator('.diff-add').allTextContents()).toEqual(['1+export const answer = 42;', '2+// checked']);
    await expect(diff.locator('.diff-del').allTextContents()).resolves.toEqual(['1−export const answer = 41;']);
    await expect(diff.locator('.diff-add .hl-keyword').first().textContent()).resolves.toBe('export');
    await expect(diff.locator('.diff-add .hl-comment').textContent()).resolves.toBe('// checked');
    await page.keyboard.press('Escape');
    await viewer.waitFor({ state: 'hidden' });

    // X1 canary: the deny-read file's bytes crossed no IPC result or push and are nowhere in the page.
    const crossed = [...harness.results, ...harness.pushed.map((event) => JSON.stringify(event))].join('\n');
    expect(crossed).toContain('notes.md');
    expect(crossed).not.toContain(CANARY);
    await expect(page.content()).resolves.not.toContain(CANARY);
  });

  it('test_undo_these_changes_lists_conflicts_changing_nothing_forces_on_request_is_journaled_and_the_rewind_is_itself_undone', async () => {
    harness = await suite.start();
    const dir = suite.tempDir('ward-e2e-undo-');
    fs.writeFileSync(path.join(dir, 'app.ts'), 'export const answer = 41;\n');
    const conversation = await seedChangedRun(harness, 'Changed files', dir, () => {
      fs.writeFileSync(path.join(dir, 'app.ts'), 'export const answer = 42;\n');
      fs.writeFileSync(path.join(dir, 'notes.md'), 'new notes\n');
    });
    // Someone edits a file the turn changed: undoing the turn would lose that edit.
    fs.writeFileSync(path.join(dir, 'app.ts'), 'export const answer = 43; // mine\n');
    const page = await harness.open();
    await page.getByRole('button', { name: /Changed files/ }).click();
    await timelineOf(page).getByRole('button', { name: 'Undo these changes' }).click();
    const dialog = page.getByRole('alertdialog', { name: "Undo this turn's file changes?" });
    await expect(dialog.textContent()).resolves.toContain('Ward never writes inside a .git/ folder.');
    await dialog.getByRole('button', { name: 'Restore files' }).click();
    await expect.poll(() => dialog.getByTestId('rewind-conflicts').textContent()).toBe(`Nothing was changed: this file has changed since Ward recorded it.${path.join(dir, 'app.ts')} (changed)`);
    expect(fs.readFileSync(path.join(dir, 'app.ts'), 'utf8')).toBe('export const answer = 43; // mine\n');
    expect(fs.existsSync(path.join(dir, 'notes.md'))).toBe(true);

    // Forced: the files are as before the turn, and the rewind is journaled and shown.
    await dialog.getByRole('button', { name: 'Overwrite them and restore' }).click();
    await dialog.waitFor({ state: 'hidden' });
    const rewound = timelineOf(page).getByRole('button', { name: /^files rewound to before event #1: 2 files changed .*1 conflicting forced$/ });
    await rewound.waitFor();
    expect(fs.readFileSync(path.join(dir, 'app.ts'), 'utf8')).toBe('export const answer = 41;\n');
    expect(fs.existsSync(path.join(dir, 'notes.md'))).toBe(false);
    const events = [...harness.core.store(harness.ns).journal.read(conversation.id, 0)].map((event) => event.type);
    expect(events.at(-1)).toBe('files_rewound');

    // The prompt offers the same restore; the rewind itself is undone from its own row.
    await expect(timelineOf(page).getByRole('button', { name: 'Restore files to before this message' }).count()).resolves.toBe(1);
    await timelineOf(page).getByRole('button', { name: 'Undo this rewind' }).click();
    const again = page.getByRole('alertdialog', { name: 'Undo this rewind?' });
    await again.getByRole('button', { name: 'Restore files' }).click();
    await again.waitFor({ state: 'hidden' });
    // The turn's file is back; the overwritten edit was never the agent's, so Ward did not keep it (X1: nothing unread is stored).
    await expect.poll(() => fs.existsSync(path.join(dir, 'notes.md'))).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'notes.md'), 'utf8')).toBe('new notes\n');
    await timelineOf(page).getByRole('button', { name: /^files rewound to before event #6: / }).waitFor();
  });

  it('test_the_diff_is_unified_or_side_by_side_by_a_keyboard_toggle_that_is_remembered_long_unchanged_runs_collapsed_in_both', async () => {
    harness = await suite.start();
    const dir = suite.tempDir('ward-e2e-split-');
    const source = (changed: Record<number, string>) => `${Array.from({ length: 40 }, (_, index) => changed[index + 1] ?? `export const v${index + 1} = ${index + 1};`).join('\n')}\n`;
    fs.writeFileSync(path.join(dir, 'app.ts'), source({}));
    await seedChangedRun(harness, 'Two edits', dir, () => fs.writeFileSync(path.join(dir, 'app.ts'), source({ 2: 'export const v2 = 200;', 38: 'export const v38 = 380; // changed' })));
    const page = await harness.open();
    await page.getByRole('button', { name: /Two edits/ }).click();
    await timelineOf(page).getByRole('button', { name: /1 file changed/ }).click();
    const viewer = page.getByRole('dialog', { name: /1 file changed/ });
    const diff = viewer.getByTestId('diff-lines');
    // Unified: the 29 unchanged lines between the two edits are one row saying so.
    await expect.poll(() => diff.locator('.diff-hunk').allTextContents()).toEqual(['@@ -1,5 +1,5 @@', '⋯ 29 unchanged lines · @@ -35,6 +35,6 @@']);
    await expect(diff.locator('.diff-split').count()).resolves.toBe(0);
    await expect(viewer.getByRole('button', { name: 'Unified' }).getAttribute('aria-pressed')).resolves.toBe('true');
    await auditScreen(page, 'diff-unified');
    // The corners are rounded by the frame around the pane, never by the pane itself: a scroller with
    // a border-radius is masked anew by the compositor every scroll frame (the bench's dropped frames).
    const corners = await diff.evaluate((pane) => [getComputedStyle(pane).borderRadius, getComputedStyle(pane.parentElement!).borderRadius]);
    expect(corners).toEqual(['0px', '6px']);

    // Keyboard: from the file list, Tab reaches the toggle; Space switches to side by side.
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('modifiedapp.ts+2 −2');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Side by side');
    await page.keyboard.press('Space');
    await expect.poll(() => viewer.getByRole('button', { name: 'Side by side' }).getAttribute('aria-pressed')).toBe('true');
    await expect(diff.getAttribute('aria-label')).resolves.toBe('Diff, 15 lines, side by side');
    // The removed line beside the line that replaced it, unchanged lines beside themselves, the collapsed run still one row.
    const pairs = diff.locator('.diff-split');
    await expect(pairs.count()).resolves.toBe(5 + 6);
    await expect(pairs.nth(1).locator('.diff-side').allTextContents()).resolves.toEqual(['2−export const v2 = 2;', '2+export const v2 = 200;']);
    await expect(pairs.nth(0).locator('.diff-side').allTextContents()).resolves.toEqual(['1 export const v1 = 1;', '1 export const v1 = 1;']);
    await expect(pairs.nth(1).locator('.diff-add .hl-keyword').first().textContent()).resolves.toBe('export');
    await expect(diff.locator('.diff-hunk').allTextContents()).resolves.toEqual(['@@ -1,5 +1,5 @@', '⋯ 29 unchanged lines · @@ -35,6 +35,6 @@']);
    await auditScreen(page, 'diff-side-by-side');

    // Remembered: the next opening is side by side too.
    await page.keyboard.press('Escape');
    await viewer.waitFor({ state: 'hidden' });
    await timelineOf(page).getByRole('button', { name: /1 file changed/ }).click();
    await expect.poll(() => viewer.getByTestId('diff-lines').locator('.diff-split').count()).toBe(11);
  });
  it('test_a_5000_line_diff_opens_from_one_request_with_its_first_screen_the_rest_arrives_after_and_the_page_holds_only_the_rows_in_view', async () => {
    harness = await suite.start();
    const dir = suite.tempDir('ward-e2e-big-diff-');
    const lines = Array.from({ length: 5_000 }, (_, index) => `export const v${index + 1} = ${index + 1};`);
    await seedChangedRun(harness, 'Big change', dir, () => fs.writeFileSync(path.join(dir, 'big.ts'), `${lines.join('\n')}\n`));
    const page = await harness.open();
    await page.getByRole('button', { name: /Big change/ }).click();
    const before = harness.results.length;
    await timelineOf(page).getByRole('button', { name: /1 file changed/ }).click();
    const viewer = page.getByRole('dialog', { name: /1 file changed/ });
    const diff = viewer.getByTestId('diff-lines');
    await expect.poll(() => diff.locator('.diff-add').first().textContent()).toBe('1+export const v1 = 1;');

    // One request opened it: the file list and the first screen of the diff, not its 5,000 lines.
    const diffResults = harness.results.slice(before).filter((json) => json.includes('export const v1 ='));
    const [opened] = diffResults.map((json) => JSON.parse(json) as { value?: { files?: unknown[]; first?: { lines: string[]; totalLines: number } } });
    expect(opened?.value?.files).toHaveLength(1);
    expect(opened!.value!.first!.totalLines).toBe(5_001);
    expect(opened!.value!.first!.lines.length).toBeLessThanOrEqual(150);
    await expect(diff.getAttribute('aria-label')).resolves.toBe('Diff, 5,001 lines');

    // The rest arrives on its own; the end of the diff scrolls into view with its own numbers,
    // and the page never holds more than the rows around what is shown.
    const rowsInPage = () => diff.locator('.diff-line').count();
    await expect(rowsInPage()).resolves.toBeLessThanOrEqual(200);
    await diff.evaluate((pane) => (pane.scrollTop = pane.scrollHeight));
    await expect.poll(() => diff.locator('.diff-add').last().textContent()).toBe('5000+export const v5000 = 5000;');
    await expect(rowsInPage()).resolves.toBeLessThanOrEqual(200);
    await expect(diff.locator('.diff-add').last().locator('.hl-keyword').first().textContent()).resolves.toBe('export');
    await diff.evaluate((pane) => (pane.scrollTop = 2_500 * 20));
    await expect.poll(() => diff.locator('.diff-add').allTextContents()).toContain('2500+export const v2500 = 2500;');
    // A jump is drawn with its rows: they are in the page by the first frame after the scroll,
    // never a blank pane for a frame while they render.
    const drawnAtOnce = await diff.evaluate(async (pane) => {
      const drawn: boolean[] = [];
      for (const line of [4_000, 1_000, 3_000]) {
        pane.scrollTop = line * 20;
        await new Promise((resolve) => requestAnimationFrame(resolve));
        drawn.push([...pane.querySelectorAll('.diff-add')].some((row) => row.textContent === `${line}+export const v${line} = ${line};`));
      }
      return drawn;
    });
    expect(drawnAtOnce).toEqual([true, true, true]);

    // By keyboard: Home, then End, lands on the right rows; rows come in plain and are highlighted
    // in idle time (off the scroll's path), so the colours arrive after the jump, on every row shown.
    await diff.focus();
    await page.keyboard.press('Home');
    await expect.poll(() => diff.evaluate((pane) => pane.scrollTop), KEYBOARD_SCROLL).toBe(0);
    await expect.poll(() => diff.locator('.diff-add').first().textContent(), KEYBOARD_SCROLL).toBe('1+export const v1 = 1;');
    await page.keyboard.press('End');
    await expect.poll(() => diff.evaluate((pane) => pane.scrollTop + pane.clientHeight >= pane.scrollHeight - 1), KEYBOARD_SCROLL).toBe(true);
    const row4990 = diff.locator('.diff-add', { hasText: '4990+export const v4990 = 4990;' });
    await expect.poll(() => row4990.locator('.hl-keyword').allTextContents(), KEYBOARD_SCROLL).toEqual(['export', 'const']);
    await expect.poll(() => diff.locator('.diff-block:not([data-highlighted="true"])').count(), KEYBOARD_SCROLL).toBe(0);
  });
});
