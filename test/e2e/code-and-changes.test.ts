/**
 * Code and diffs read like an editor (issues 26 and 31) in real Chromium under Ward's CSP: code
 * blocks highlighted with the languages Ward registers, hostile code inert.
 */
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { RUN_STARTED } from '../support/events.js';
import { seedConversation, timelineOf, useUiSuite, type UiHarness } from './harness/harness.js';

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
