// Issue 31, desktop item 1: with no model key the window sets itself up — where the model is, its
// key (stored in main, never shown back), Test connection and a first folder — and every no-key
// error is a button that opens that card, never a terminal command. Real core, real Chromium.
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { timelineOf, useUiSuite, type UiHarness } from './harness/harness.js';
import { auditScreen } from './harness/axe.js';

const suite = useUiSuite();
const TYPED_KEY = 'sk-ant-typed-in-setup-8d41c0e7a2b9';
/** No key stored and none in Ward's environment: a first run. */
const NO_KEY = { env: { ANTHROPIC_API_KEY: '' } };

/** Everything that crossed main → page, and the page itself. */
async function crossed(harness: UiHarness, page: Page): Promise<string> {
  return [...harness.results, ...harness.pushed.map((event) => JSON.stringify(event)), await page.content()].join('\n');
}

describe('first run sets itself up (issue 31 desktop #1)', () => {
  it('test_with_no_model_key_the_empty_state_is_a_setup_card_that_stores_the_key_tests_the_connection_and_starts_a_chat_in_a_first_folder', async () => {
    const harness = await suite.start({ ...NO_KEY, script: [{ blocks: [{ type: 'text', text: 'Set up and answering.' }] }] });
    const project = suite.tempDir('ward-e2e-first-folder-');
    const page = await harness.open();
    const card = page.getByRole('region', { name: 'Set up Ward' });
    await card.getByRole('heading', { level: 1, name: 'Set up Ward' }).waitFor();
    await expect(page.getByText('Choose a session').count()).resolves.toBe(0);
    // The endpoint Ward uses now (here the environment's) is offered as the gateway.
    await expect(card.getByRole('radio', { name: 'A company gateway' }).isChecked()).resolves.toBe(true);
    await expect(card.getByRole('textbox', { name: 'Gateway URL' }).inputValue()).resolves.toBe(harness.provider.url);
    await auditScreen(page, 'first-run');

    // Saving without a key says so at the key field, tied to it.
    await card.getByRole('button', { name: 'Save' }).click();
    const key = card.getByLabel('2. Model key');
    await expect(key.getAttribute('aria-invalid')).resolves.toBe('true');
    await expect(page.locator(`#${await key.getAttribute('aria-describedby')}`).textContent()).resolves.toBe('Enter the model key.');
    // A plain-http gateway off loopback is refused at the URL field (L1), nothing saved.
    await card.getByRole('textbox', { name: 'Gateway URL' }).fill('http://example.com');
    await key.fill(TYPED_KEY);
    await card.getByRole('button', { name: 'Save' }).click();
    const url = card.getByRole('textbox', { name: 'Gateway URL' });
    await expect.poll(() => url.getAttribute('aria-invalid')).toBe('true');
    await expect(page.locator(`#${await url.getAttribute('aria-describedby')}`).textContent()).resolves.toMatch(/http:\/\/ is allowed only for loopback hosts/);
    await expect(page.locator('.banner').count()).resolves.toBe(0);

    await url.fill(harness.provider.url);
    await card.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => card.getByTestId('setup-test').textContent()).toMatch(/^Connected: 127\.0\.0\.1:\d+ answered for model .+ in \d+ ms\.$/);
    await expect(key.getAttribute('aria-invalid')).resolves.toBeNull();
    await expect(key.inputValue()).resolves.toBe('');
    await expect(card.getByTestId('setup-key-state').textContent()).resolves.toBe('A key is stored; a new one replaces it.');
    // The key went page → main only: not in any result, push or the page.
    expect(await crossed(harness, page)).not.toContain(TYPED_KEY);

    // A first folder, and the chat starts in it with the stored key.
    harness.folderChoice = project;
    await card.getByRole('button', { name: 'Choose a folder…' }).click();
    await card.locator('.chosen-folder', { hasText: project }).waitFor();
    await card.getByRole('button', { name: 'Start a chat in this folder' }).click();
    await page.getByRole('heading', { level: 1, name: 'New chat' }).waitFor();
    await page.locator('.chosen-folder', { hasText: project }).waitFor();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('hello');
    await box.press('Enter');
    await timelineOf(page).getByText('Set up and answering.').waitFor();
    const [request] = harness.provider.conversationRequests();
    expect(request!.headers['x-api-key']).toBe(TYPED_KEY);
    expect(await crossed(harness, page)).not.toContain(TYPED_KEY);
  });

  it('test_a_no_key_error_is_a_button_that_opens_the_setup_card_never_a_terminal_command', async () => {
    const harness = await suite.start(NO_KEY);
    const page = await harness.open();
    await page.getByRole('heading', { level: 1, name: 'Set up Ward' }).waitFor();
    await page.getByRole('button', { name: 'New chat' }).first().click();
    const box = page.getByRole('textbox', { name: 'Message' });
    await box.fill('hello');
    await box.press('Enter');
    const alert = page.getByRole('alert');
    await expect(alert.textContent()).resolves.toContain('Ward has no usable model key for this namespace yet.');
    // No terminal command anywhere the page was told or shows.
    expect(await crossed(harness, page)).not.toMatch(/set-key|provider set|ward --namespace|ANTHROPIC_API_KEY/);
    await alert.getByRole('button', { name: 'Set up the model' }).click();
    await page.getByRole('heading', { level: 1, name: 'Set up Ward' }).waitFor();
  });
});
