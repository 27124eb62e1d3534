// Issue 31, desktop item 6: below ~1000 px the sessions pane folds away behind the rail's
// Sessions toggle (aria-expanded, aria-controls); wide windows keep it open; the chat's header
// stays one line at 800 px; a long answer offers a jump back to its start. Real Chromium.
import { describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { RUN_STARTED } from '../support/events.js';
import { seedConversation, useUiSuite } from './harness/harness.js';
import { auditScreen } from './harness/axe.js';

const suite = useUiSuite();

describe('the window at 800 and 1600 px (issue 31 desktop #6)', () => {
  it('test_the_sessions_pane_collapses_below_1000_px_behind_a_toggle_and_stays_open_when_wide', async () => {
    const harness = await suite.start();
    seedConversation(harness, 'Narrow window chat');
    const page = await harness.open();
    const search = page.getByRole('searchbox', { name: 'Search sessions' });
    const toggle = page.getByRole('button', { name: 'Sessions' });
    await page.setViewportSize({ width: 1600, height: 1000 });
    await search.waitFor();
    await expect(toggle.isVisible()).resolves.toBe(false);

    await page.setViewportSize({ width: 800, height: 600 });
    await search.waitFor({ state: 'hidden' });
    await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('false');
    await expect(toggle.getAttribute('aria-controls')).resolves.toBe('sessions-pane');
    await toggle.click();
    await search.waitFor();
    await expect(toggle.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.getByRole('button', { name: /Narrow window chat/ }).waitFor();
    await auditScreen(page, 'sessions-pane-open');
    await toggle.click();
    await search.waitFor({ state: 'hidden' });
  });

  it('test_settings_show_the_provider_and_the_key_side_by_side_when_wide_and_stacked_at_800', async () => {
    const harness = await suite.start();
    const page = await harness.open();
    await page.getByRole('button', { name: 'Settings' }).click();
    const provider = page.getByRole('heading', { level: 2, name: 'Model provider' });
    const key = page.getByRole('heading', { level: 2, name: 'Model key' });
    await provider.waitFor();
    await page.setViewportSize({ width: 1600, height: 1000 });
    const wide = [await provider.boundingBox(), await key.boundingBox()];
    expect(wide[1]!.y).toBe(wide[0]!.y);
    expect(wide[1]!.x).toBeGreaterThan(wide[0]!.x + 300);
    await page.setViewportSize({ width: 800, height: 600 });
    const narrow = [await provider.boundingBox(), await key.boundingBox()];
    expect(narrow[1]!.x).toBe(narrow[0]!.x);
    expect(narrow[1]!.y).toBeGreaterThan(narrow[0]!.y);
  });

  it('test_a_long_answer_offers_a_jump_to_its_start_and_the_chat_header_stays_one_line_at_800', async () => {
    const harness = await suite.start();
    const conversation = seedConversation(harness, 'A long answer with a rather long title that could wrap the header');
    const answer = ['THE FIRST LINE of a long answer.', ...Array.from({ length: 80 }, (_, i) => `Line ${i + 1} of the answer, which goes on.`), 'THE LAST LINE.'].join('\n\n');
    harness.core.store(harness.ns).journal.appendMany(
      conversation.id,
      [journalEvent('run_started', RUN_STARTED), journalEvent('user_prompt', { text: 'Say a lot' }), journalEvent('assistant_text', { text: answer }), journalEvent('assistant_text', { text: 'A short one.' })].map((event) => ({
        ...event,
        runId: '00000000-0000-4000-8000-0000000000b1',
      })),
    );
    const page = await harness.open();
    await page.setViewportSize({ width: 800, height: 600 });
    await page.getByRole('button', { name: 'Sessions' }).click();
    await page.getByRole('button', { name: /A long answer with/ }).click();
    // Opening a chat from the narrow pane folds the pane away: it covered the chat.
    await expect.poll(() => page.getByRole('button', { name: 'Sessions' }).getAttribute('aria-expanded')).toBe('false');
    await page.getByText('THE LAST LINE.').waitFor();

    // The header does not wrap: the long title is one line (cut with an ellipsis), and its facts
    // (agent, folder) share one line.
    const lines = await page.locator('.chat-header').evaluate((header) => {
      const title = header.querySelector('h1')!;
      const lineHeight = parseFloat(getComputedStyle(title).lineHeight);
      const tops = [...header.querySelectorAll('.chat-facts > .fact')].map((fact) => Math.round(fact.getBoundingClientRect().top));
      return { titleLines: Math.round(title.getBoundingClientRect().height / lineHeight), factTops: new Set(tops).size, facts: tops.length };
    });
    expect(lines).toEqual({ titleLines: 1, factTops: 1, facts: 2 });

    // Only the long answer offers the jump; it brings the answer's first line into view and focus to its head.
    const jump = page.getByRole('button', { name: 'Jump to the start of this answer' });
    await expect(jump.count()).resolves.toBe(1);
    await page.getByText('THE LAST LINE.').scrollIntoViewIfNeeded();
    const first = page.getByText('THE FIRST LINE of a long answer.');
    const inView = async (): Promise<boolean> => {
      const box = await first.boundingBox();
      return box !== null && box.y >= 0 && box.y + box.height <= 600;
    };
    await expect(inView()).resolves.toBe(false);
    await jump.click();
    await expect.poll(inView).toBe(true);
    await expect(page.evaluate(() => document.activeElement?.classList.contains('message-head'))).resolves.toBe(true);
  });
});
