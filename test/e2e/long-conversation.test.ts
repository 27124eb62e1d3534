// The virtualized chat timeline in real Chromium under Ward's CSP: where it opens, what it keeps
// observed while the person scrolls, how rows of different heights stack, and when it follows.
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { seedConversation, timelineOf, useUiSuite, type UiHarness } from './harness/harness.js';

const suite = useUiSuite();

interface Probe {
  __observed(): { total: number; detached: number };
  __cspViolations: string[];
}

/** Before the renderer loads: counts what every ResizeObserver observes, and records CSP violations. */
function installProbe(): void {
  const probe = window as unknown as Probe;
  const live = new Map<ResizeObserver, Set<Element>>();
  const Original = window.ResizeObserver;
  window.ResizeObserver = class extends Original {
    constructor(callback: ResizeObserverCallback) {
      super(callback);
      live.set(this, new Set());
    }
    override observe(target: Element, options?: ResizeObserverOptions) {
      live.get(this)!.add(target);
      super.observe(target, options);
    }
    override unobserve(target: Element) {
      live.get(this)!.delete(target);
      super.unobserve(target);
    }
    override disconnect() {
      live.get(this)!.clear();
      super.disconnect();
    }
  };
  probe.__observed = () => {
    const all = [...live.values()].flatMap((targets) => [...targets]);
    return { total: all.length, detached: all.filter((element) => !element.isConnected).length };
  };
  probe.__cspViolations = [];
  document.addEventListener('securitypolicyviolation', (event) => probe.__cspViolations.push(`${event.violatedDirective}: ${event.sample} ${event.sourceFile}:${event.lineNumber}`));
}

/** Where the timeline stands: scroll position, size, and the rows mounted now (in page pixels). */
function timeline(page: Page) {
  return page.evaluate(() => {
    const list = document.querySelector<HTMLElement>('.vlist')!;
    const rows = [...document.querySelectorAll<HTMLElement>('.vrow')].map((row) => {
      const box = row.getBoundingClientRect();
      return { text: row.textContent ?? '', top: box.top, bottom: box.bottom };
    });
    const box = list.getBoundingClientRect();
    return { scrollTop: list.scrollTop, scrollHeight: list.scrollHeight, top: box.top, bottom: box.bottom, rows };
  });
}

/** The row showing `text` is mounted and wholly inside the list's visible area. */
function inView(view: Awaited<ReturnType<typeof timeline>>, text: string): boolean {
  const row = view.rows.find((candidate) => candidate.text.includes(text));
  return row !== undefined && row.top >= view.top - 1 && row.bottom <= view.bottom + 1;
}

const frames = (page: Page, count = 2) =>
  page.evaluate(async (n) => {
    for (let i = 0; i < n; i++) await new Promise((resolve) => requestAnimationFrame(resolve));
  }, count);

async function openLong(harness: UiHarness, messages: number): Promise<{ page: Page; conversationId: string }> {
  const conversation = seedConversation(harness, 'Long chat');
  harness.core.store(harness.ns).journal.appendMany(
    conversation.id,
    Array.from({ length: messages }, (_, index) => ({
      type: index % 2 === 0 ? 'user_prompt' : 'assistant_text',
      // Every seventh message runs to several lines, so rows differ in height.
      payload: { text: `Message ${index}: ${index % 7 === 0 ? 'a long paragraph that wraps over several lines. '.repeat(12) : 'a short line.'}` },
    })),
  );
  const page = await harness.context.newPage();
  await page.addInitScript(installProbe);
  await page.goto(harness.url);
  await page.getByRole('button', { name: /Long chat/ }).click();
  await timelineOf(page).getByText(`Message ${messages - 1}:`).waitFor();
  await frames(page);
  return { page, conversationId: conversation.id };
}

describe('the chat timeline of a long conversation in real Chromium', () => {
  it('test_renders_a_10_000_message_conversation_as_a_window_of_rows_opened_at_the_newest_rows_of_different_heights_not_overlapping', async () => {
    const harness = await suite.start();
    const { page } = await openLong(harness, 10_000);
    const view = await timeline(page);
    expect(inView(view, 'Message 9999:')).toBe(true);
    expect(view.rows.length).toBeGreaterThan(0);
    expect(view.rows.length).toBeLessThan(100);
    // The spacer stands for the whole conversation, so the scrollbar is honest (once the history
    // behind the newest rows has loaded: on a busy machine that can take a few frames more).
    await expect.poll(async () => (await timeline(page)).scrollHeight).toBeGreaterThan(10_000 * 50);
    const sorted = [...view.rows].sort((a, b) => a.top - b.top);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]!.top).toBeGreaterThanOrEqual(sorted[i - 1]!.bottom - 1);
    await expect(page.evaluate(() => (window as unknown as Probe).__cspViolations)).resolves.toEqual([]);
  });

  it('test_observes_only_the_rows_on_screen_after_scrolling_through_hundreds_of_them_no_resizeobserver_leak', async () => {
    const harness = await suite.start();
    const { page } = await openLong(harness, 2_000);
    const start = await page.evaluate(() => (window as unknown as Probe).__observed());
    // Forty screens upwards, a frame or two each, as a person scrolling back would.
    for (let screen = 0; screen < 40; screen++) {
      await page.evaluate(() => {
        const list = document.querySelector<HTMLElement>('.vlist')!;
        list.scrollTop -= list.clientHeight;
      });
      await frames(page);
    }
    const view = await timeline(page);
    expect(view.rows.some((row) => row.text.includes('Message 1999:'))).toBe(false);
    const observed = await page.evaluate(() => (window as unknown as Probe).__observed());
    expect(observed.detached).toBe(0);
    // The mounted rows and the scroll container, not every row ever shown.
    expect(observed.total).toBeLessThanOrEqual(view.rows.length + 1);
    // At the newest rows nothing lies below to overscan; mid-list the overscan on both sides is mounted (24 rows each way).
    expect(observed.total).toBeLessThan(start.total + 30);
  });

  it('test_follows_a_new_message_while_at_the_bottom_and_leaves_the_person_where_they_are_after_scrolling_up', async () => {
    const harness = await suite.start();
    const { page, conversationId } = await openLong(harness, 300);
    const { journal } = harness.core.store(harness.ns);

    journal.append(conversationId, { type: 'user_prompt', payload: { text: 'Followed question.' } });
    await timelineOf(page).getByText('Followed question.').waitFor();
    await frames(page, 4);
    expect(inView(await timeline(page), 'Followed question.')).toBe(true);
    // An answer that then grows (a second text of the same run joins its row) stays in view too.
    journal.append(conversationId, { type: 'assistant_text', payload: { text: 'Followed answer. '.repeat(30) } });
    journal.append(conversationId, { type: 'assistant_text', payload: { text: 'Its last line.' } });
    await timelineOf(page).getByText('Its last line.').waitFor();
    await frames(page, 4);
    let view = await timeline(page);
    expect(inView(view, 'Its last line.')).toBe(true);
    expect(view.rows.at(-1)?.text).toContain('Its last line.');

    await page.evaluate(() => (document.querySelector<HTMLElement>('.vlist')!.scrollTop = 1_000));
    await frames(page, 4);
    view = await timeline(page);
    journal.append(conversationId, { type: 'user_prompt', payload: { text: 'A question while reading history.' } });
    // It is off screen: its arrival shows as a taller list.
    await page.waitForFunction((before) => document.querySelector('.vlist')!.scrollHeight > before, view.scrollHeight, { timeout: 10_000 });
    await frames(page, 4);
    const after = await timeline(page);
    expect(after.scrollTop).toBe(view.scrollTop);
    expect(after.rows.map((row) => [row.text, row.top])).toEqual(view.rows.map((row) => [row.text, row.top]));
  });
});
