/** The desktop's session search, turn usage, and read-only review of a bundle, in real Chromium bridged to the real core. */
import { describe, expect, it } from 'vitest';
import { appendTurn, makeBundle, rechain, withLines, type Line } from '../export/support.js';
import { seedConversation, useUiSuite } from './harness/harness.js';
import { auditScreen } from './harness/axe.js';

const suite = useUiSuite();

describe('searching sessions', () => {
  it('test_finds_words_in_messages_across_sessions_jumps_to_the_event_and_shows_each_turns_usage_and_the_total', async () => {
    const harness = await suite.start();
    const store = harness.core.store(harness.ns);
    const trip = seedConversation(harness, 'Trip planning');
    appendTurn(store, trip.id, '00000000-0000-4000-8000-000000000001', 'Pack light for Lisbon.', 0.002);
    for (let turn = 2; turn <= 30; turn++) appendTurn(store, trip.id, `00000000-0000-4000-8000-0000000000${String(turn).padStart(2, '0')}`, `Filler answer ${turn}.`, 0.002 * turn);
    seedConversation(harness, 'Holiday plans');
    const page = await harness.open();
    await page.getByRole('searchbox', { name: 'Search sessions' }).fill('pack light');
    const found = page.getByRole('list', { name: 'Found in messages' });
    await found.getByText('Trip planning').waitFor();
    await expect(found.locator('mark').allTextContents()).resolves.toEqual(['Pack', 'light']);
    await auditScreen(page, 'search-hits');
    await found.getByRole('button').first().click();
    // The answer of the first turn is brought into view (the chat otherwise opens at its newest row).
    const focused = page.locator('.vrow-focus');
    await focused.getByText('Pack light for Lisbon.').waitFor();
    await expect(page.getByRole('region', { name: 'Conversation' }).getByText('Pack light for Lisbon.').isVisible()).resolves.toBe(true);
    await expect(page.getByTestId('turn-usage').first().textContent()).resolves.toBe('Turn: 120 in · 30 out tokens · $0.0020');
    expect((await page.getByTestId('chat-usage').textContent())?.trim()).toBe('Total: 3,600 in · 900 out tokens · $0.0600');
    await expect(page.getByTestId('usage-today').textContent()).resolves.toBe('Today: 3,600 in · 900 out tokens · $0.0600');

    // Many hits in one conversation are one group under its title, a snippet per hit, not a row each
    // repeating the title; the title matches and the message hits are told apart.
    await page.getByRole('searchbox', { name: 'Search sessions' }).fill('filler answer');
    await expect.poll(() => found.getByRole('button').count()).toBeGreaterThan(5);
    await expect(found.locator('.hit-group').count()).resolves.toBe(1);
    await expect(found.locator('.hit-group-title').textContent()).resolves.toBe('Trip planning');
    await expect(page.locator('.sidebar-heading').allTextContents()).resolves.toEqual(['Titles', 'In messages']);
    await auditScreen(page, 'search-hits-grouped');

    // Typed text is searched as the words it holds; a query with none says so in place.
    await page.getByRole('searchbox', { name: 'Search sessions' }).fill('pack-light');
    await found.getByText('Trip planning').waitFor();
    await page.getByRole('searchbox', { name: 'Search sessions' }).fill('->');
    await found.getByText(/has no word to look for/).waitFor();
    await expect(page.locator('[role=alert]').count()).resolves.toBe(0);
  });
});

/** "Open bundle…" in the main window, then the review window it opens (the Electron shell opens it in a window of its own; here, a page at the same address). */
async function openReview(file: string) {
  const harness = await suite.start({ bundleToOpen: file });
  const main = await harness.open();
  await main.getByRole('button', { name: 'Open bundle…' }).click();
  await expect.poll(() => harness.results.some((result) => result.includes('"reviewId"')), { timeout: 10_000 }).toBe(true);
  const opened = JSON.parse(harness.results.find((result) => result.includes('"reviewId"'))!) as { value: { reviewId: string; ok: boolean } };
  const review = await harness.context.newPage();
  await review.goto(`${harness.url}#review/${opened.value.reviewId}`);
  return { opened, review };
}

describe('reviewing a bundle', () => {
  // Everything in a bundle came from outside this Ward: its title and agent show as visible marks, never as bidi or invisible text (D1).
  it('test_a_bundle_whose_title_and_agent_carry_bidi_and_invisible_characters_shows_them_as_marks', async () => {
    const bundle = makeBundle(1, { title: 'invoice\u202Etxt.exe\u{E0041}', agentName: 'helper\u200B\u2800\u2800\u2800' });
    const { review } = await openReview(bundle.file);
    await review.getByTestId('review-banner').waitFor();
    const header = (await review.locator('.chat-header').textContent()) ?? '';
    expect(header).toContain('invoice\\u{202e}txt.exe\\u{e0041}');
    expect(header).not.toMatch(/[\u202e\u200b\u2800]|\u{E0041}/u);
  });

  it('test_opens_a_bundle_read_only_with_the_signer_banner_no_composer_and_a_window_that_reaches_no_namespace', async () => {
    const bundle = makeBundle(2);
    const { opened, review } = await openReview(bundle.file);
    expect(opened.value.ok).toBe(true);
    const banner = review.getByTestId('review-banner');
    await banner.waitFor();
    await expect(banner.textContent()).resolves.toContain(`Read-only review · signed by ${bundle.key.fingerprint}`);
    await review.getByText('It is sunny in Lisbon (turn 2).').waitFor();
    await expect(review.getByRole('textbox', { name: 'Message' }).count()).resolves.toBe(0);
    await expect(review.getByRole('button', { name: /Send|Stop/ }).count()).resolves.toBe(0);
    await expect(review.getByTestId('turn-usage').allTextContents()).resolves.toEqual(['Turn: 120 in · 30 out tokens · $0.0020', 'Turn: 120 in · 30 out tokens · $0.0020']);
    await auditScreen(review, 'review-window');

    // The review window reaches its bundle and nothing of any namespace.
    const call = (channel: string, payload: unknown) =>
      review.evaluate(([c, p]) => (window as unknown as { __wardInvoke(c: unknown, p: unknown): Promise<unknown> }).__wardInvoke(c, p), [channel, payload] as const);
    for (const [channel, payload] of [
      ['namespaces.list', {}],
      ['conversations.list', { namespace: 'default' }],
      ['settings.get', { namespace: 'default' }],
      ['runs.send', { namespace: 'default', conversationId: bundle.conversationId, requestId: bundle.conversationId, prompt: 'hi' }],
    ] as const) {
      await expect(call(channel, payload)).resolves.toEqual({ ok: false, error: { code: 'forbidden_sender', message: `${channel}: a review window reaches only the bundle it shows` } });
    }
    await expect(call('review.get', { reviewId: opened.value.reviewId })).resolves.toMatchObject({ ok: true, value: { signer: bundle.key.fingerprint } });
  });

  it('test_a_tampered_bundle_marks_the_one_event_not_as_signed_on_its_own_row_under_the_not_verified_banner', async () => {
    const bundle = makeBundle(2);
    // Event 2 (the first prompt) edited, and every hash after it recomputed, as someone rewriting the journal would.
    const tampered = withLines(bundle, (lines) => rechain(lines.map((line) => JSON.parse(line) as Line).map((line, index) => (index === 1 ? { ...line, payload: line.payload.replace('Lisbon', 'Porto') } : line))));
    const { opened, review } = await openReview(tampered);
    expect(opened.value.ok).toBe(false);
    await expect(review.getByTestId('review-banner').textContent()).resolves.toContain('Read-only review · NOT VERIFIED');
    await review.getByText('It is sunny in Lisbon (turn 2).').waitFor();
    // The edited prompt's row, and only it, says so; the prompt of turn 2, as signed, carries no mark.
    const marked = review.getByTestId('not-as-signed');
    await expect(marked.count()).resolves.toBe(1);
    await expect(marked.locator('.not-as-signed-mark').textContent()).resolves.toBe(' NOT AS SIGNED: event #2 could not be matched to what was signed');
    await expect(marked.getByTestId('message').textContent()).resolves.toContain('What is the weather in Porto?');
    await expect(review.getByTestId('message').filter({ hasText: 'What is the weather in Lisbon?' }).count()).resolves.toBe(1);
    await auditScreen(review, 'review-window-tampered');
  });
});
