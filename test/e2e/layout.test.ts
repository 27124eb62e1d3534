// Issue 31, desktop item 6: below ~1000 px the sessions pane folds away behind the rail's
// Sessions toggle (aria-expanded, aria-controls); wide windows keep it open. Real Chromium.
import { describe, expect, it } from 'vitest';
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
});
