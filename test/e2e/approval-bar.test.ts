/**
 * Issue 31: an approval is never out of sight. While one waits, a bar above the composer says
 * so; when its card is scrolled away (at 800×600 a long prompt pushes it out), "approval waiting ↓"
 * brings it back. Real Chromium, the real CLI, the scripted provider.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { publishToolAgent, startChat, timelineOf, useUiSuite } from './harness/harness.js';
import { auditScreen } from './harness/axe.js';

const suite = useUiSuite();

describe('a waiting approval in a small window', () => {
  it('test_a_bar_above_the_composer_names_the_waiting_approval_and_its_pill_scrolls_the_card_back_into_view', async () => {
    const root = suite.tempDir('ward-e2e-bar-');
    fs.mkdirSync(path.join(root, 'granted'));
    const secret = path.join(root, 'secret.txt');
    fs.writeFileSync(secret, 'the secret file\n');
    const harness = await suite.start({
      script: [{ blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: secret } }] }, { blocks: [{ type: 'text', text: 'Done reading.' }] }],
      env: { WARD_SANDBOX: 'off' },
    });
    await publishToolAgent(harness);
    const store = harness.core.store(harness.ns);
    new GrantStore(store.db).add({ scope: 'agent', agentId: store.agents.get('tooly').agentId, effect: 'allow', kind: 'read', value: path.join(root, 'granted'), grantedBy: 'test' });
    const page = await harness.open();
    await page.setViewportSize({ width: 800, height: 600 });
    const prompt = ['read the secret file', ...Array.from({ length: 60 }, (_, index) => `context line ${index + 1}`)].join('\n');
    await startChat(page, 'tooly', prompt);
    const card = page.getByTestId('approval');
    await card.waitFor();
    const bar = page.getByTestId('approval-bar');
    await expect(bar.textContent()).resolves.toMatch(/^Agent tooly wants to read .*secret\.txt: waiting for your answer/);
    // The bar sits just above the composer.
    const [barBox, composerBox] = await Promise.all([bar.boundingBox(), page.locator('.composer').boundingBox()]);
    expect(barBox!.y + barBox!.height).toBeLessThanOrEqual(composerBox!.y + 1);

    // Scrolled back to the prompt, the card is out of sight: the pill says so.
    await timelineOf(page).evaluate((list) => (list.scrollTop = 0));
    const pill = bar.getByRole('button', { name: 'approval waiting ↓' });
    await pill.waitFor();
    await auditScreen(page, 'chat-approval-bar');
    await pill.click();
    await expect.poll(() => card.evaluate((element) => {
      const shown = element.getBoundingClientRect();
      const list = element.closest('.vlist')!.getBoundingClientRect();
      return shown.top >= list.top - 1 && shown.top < list.bottom;
    })).toBe(true);
    await pill.waitFor({ state: 'detached' });

    // Answered, the bar goes away.
    await page.locator('[data-testid=approval][data-armed=true]').waitFor();
    await card.getByRole('button', { name: 'Deny' }).click();
    await bar.waitFor({ state: 'detached' });
  });
});
