/**
 * The desktop chat in real Chromium, the three figures issue 17 sets, in one run:
 *  - opening: a 10,000-message conversation, from navigation start to its LATEST message on
 *    screen, against the same page opening an empty conversation (target: ≤300 ms more);
 *  - scrolling it: 150 wheel steps upwards, every frame timed (target: p95 ≤33 ms) and checked
 *    for rows covering the viewport (target: no blank frame);
 *  - a 2 MB answer streaming in as deltas, then its final text (bounded, as a turn journals it): the longest task the page ran
 *    (target: none over 100 ms).
 * The page is the built renderer with window.ward bridged to the real core (the e2e harness), so
 * the journal crosses the same contract as in the app.
 */
import type { Page } from 'playwright-core';
import { truncateText } from '../main/app/runs/event-bounds.js';
import { launchChromium, seedConversation, startUiHarness, type UiHarness } from '../test/e2e/harness/harness.js';
import { percentile, round } from './stats.js';

const MESSAGES = 10_000;
const ROUNDS = 5;
const OPEN_TARGET_MS = 300;
const WHEEL_STEPS = 150;
const WHEEL_PX = 240;
const FRAME_TARGET_MS = 33;
const ANSWER_BYTES = 2 * 1024 * 1024;
const DELTA_BYTES = 8 * 1024;
const LONG_TASK_TARGET_MS = 100;

/** Records when an element matching `selector` whose text contains `text` is about to be painted. */
function installProbe([selector, text]: [string, string]): void {
  const probe = window as unknown as { __firstPaintMs?: number };
  const observer = new MutationObserver(() => {
    if (![...document.querySelectorAll(selector)].some((element) => (element.textContent ?? '').includes(text))) return;
    observer.disconnect();
    requestAnimationFrame(() => {
      probe.__firstPaintMs = performance.now();
    });
  });
  observer.observe(document, { childList: true, subtree: true });
}

async function openOn(harness: UiHarness, conversationId: string): Promise<Page> {
  const page = await harness.context.newPage();
  // Open straight on the conversation, as after a reload.
  await page.addInitScript((id) => sessionStorage.setItem('ward.place', JSON.stringify({ namespace: 'default', page: 'chats', conversationId: id })), conversationId);
  return page;
}

async function firstPaint(harness: UiHarness, conversationId: string, selector: string, text: string): Promise<number> {
  const page = await openOn(harness, conversationId);
  try {
    await page.addInitScript(installProbe, [selector, text] as [string, string]);
    await page.goto(harness.url);
    await page.waitForFunction(() => typeof (window as unknown as { __firstPaintMs?: number }).__firstPaintMs === 'number', undefined, { timeout: 30_000 });
    return await page.evaluate(() => (window as unknown as { __firstPaintMs: number }).__firstPaintMs);
  } finally {
    await page.close();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function benchOpen(harness: UiHarness, emptyId: string, longId: string): Promise<Record<string, unknown>> {
  const emptyPaint = () => firstPaint(harness, emptyId, '.chat .chat-empty', '');
  const longPaint = () => firstPaint(harness, longId, '.chat .vrow', `Message ${MESSAGES - 1}:`);
  // One warm-up each (JIT, disk cache), then alternate so drift affects both alike.
  await emptyPaint();
  await longPaint();
  const baseline: number[] = [];
  const measured: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    baseline.push(await emptyPaint());
    measured.push(await longPaint());
  }
  const emptyMs = median(baseline);
  const longMs = median(measured);
  return {
    messages: MESSAGES,
    rounds: ROUNDS,
    emptyConversationMs: round(emptyMs),
    latestMessageOnScreenMs: round(longMs),
    ratio: round(longMs / emptyMs),
    extraMs: round(longMs - emptyMs),
    targetExtraMs: OPEN_TARGET_MS,
    pass: longMs - emptyMs <= OPEN_TARGET_MS,
  };
}

/** Times every frame and counts the ones where rows do not cover the list's viewport (blank). */
const FRAME_PROBE = `(() => {
  const probe = window;
  probe.__frames = [];
  probe.__blank = 0;
  probe.__stop = false;
  const list = document.querySelector('.vlist');
  let last = performance.now();
  const tick = (now) => {
    probe.__frames.push(now - last);
    last = now;
    const view = list.getBoundingClientRect();
    // The band of the viewport that rows should cover (the list's own margins at its ends stay empty).
    const space = list.querySelector('.vlist-space').getBoundingClientRect();
    const top = Math.max(view.top, space.top);
    const bottom = Math.min(view.bottom, space.bottom);
    const rows = [...list.querySelectorAll('.vrow')].map((row) => row.getBoundingClientRect()).filter((box) => box.bottom > top && box.top < bottom);
    const covered = rows.length > 0 && Math.min(...rows.map((box) => box.top)) <= top + 1 && Math.max(...rows.map((box) => box.bottom)) >= bottom - 1;
    if (!covered) probe.__blank++;
    if (!probe.__stop) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})()`;

async function benchScroll(harness: UiHarness, longId: string): Promise<Record<string, unknown>> {
  const page = await openOn(harness, longId);
  try {
    await page.goto(harness.url);
    await page.locator('.vrow', { hasText: `Message ${MESSAGES - 1}:` }).waitFor({ timeout: 30_000 });
    // The whole history in (the list is as tall as the conversation).
    await page.waitForFunction((n) => document.querySelector('.vlist')!.scrollHeight > n * 40, MESSAGES, { timeout: 60_000 });
    // A string, not a function: tsx would wrap the inner functions in a helper the page lacks.
    await page.evaluate(FRAME_PROBE);
    await page.locator('.vlist').hover();
    for (let step = 0; step < WHEEL_STEPS; step++) await page.mouse.wheel(0, -WHEEL_PX);
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 300)));
    const { frames, blank } = await page.evaluate(() => {
      const probe = window as unknown as { __frames: number[]; __blank: number; __stop: boolean };
      probe.__stop = true;
      return { frames: probe.__frames.slice(1), blank: probe.__blank };
    });
    const p95 = percentile([...frames], 95);
    return {
      wheelSteps: WHEEL_STEPS,
      frames: frames.length,
      p50FrameMs: round(percentile([...frames], 50)),
      p95FrameMs: round(p95),
      maxFrameMs: round(Math.max(...frames)),
      blankFrames: blank,
      targetP95FrameMs: FRAME_TARGET_MS,
      pass: p95 <= FRAME_TARGET_MS && blank === 0,
    };
  } finally {
    await page.close();
  }
}

async function benchStreaming(harness: UiHarness): Promise<Record<string, unknown>> {
  const conversation = seedConversation(harness, 'two megabytes');
  const { journal } = harness.core.store(harness.ns);
  const runId = '00000000-0000-4000-8000-00000000b2b2';
  journal.append(conversation.id, { type: 'user_prompt', payload: { text: 'Write two megabytes' }, runId });
  const page = await openOn(harness, conversation.id);
  try {
    await page.addInitScript(() => {
      const probe = window as unknown as { __longTasks: number[] };
      probe.__longTasks = [];
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) probe.__longTasks.push(entry.duration);
      }).observe({ type: 'longtask', buffered: true });
    });
    await page.goto(harness.url);
    await page.locator('.message-user').waitFor({ timeout: 30_000 });
    await page.evaluate(() => ((window as unknown as { __longTasks: number[] }).__longTasks.length = 0));
    // Paragraphs of prose with some Markdown, as a model writes them.
    const paragraph = `A paragraph of a very long answer, with **bold**, \`code\` and a [link](https://example.com/docs). ${'More words follow here. '.repeat(12)}\n\n`;
    const answer = paragraph.repeat(Math.ceil(ANSWER_BYTES / paragraph.length)).slice(0, ANSWER_BYTES);
    const started = performance.now();
    for (let offset = 0; offset < answer.length; offset += DELTA_BYTES) {
      journal.append(conversation.id, { type: 'assistant_delta', payload: { text: answer.slice(offset, offset + DELTA_BYTES), messageIndex: 0 }, runId });
      await new Promise((resolve) => setTimeout(resolve, 4));
    }
    // The final text as a turn journals it (bounded per event); the deltas carried all 2 MB.
    const final = truncateText(answer);
    journal.append(conversation.id, { type: 'assistant_text', payload: { text: final }, runId });
    journal.append(conversation.id, { type: 'run_finished', payload: { state: 'succeeded', reason: null }, runId });
    await page.locator('.message-assistant').waitFor({ timeout: 60_000 });
    await page.locator('.message-assistant', { hasText: 'truncated' }).waitFor({ timeout: 120_000 });
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 500)));
    const streamedMs = performance.now() - started;
    const longTasks = await page.evaluate(() => (window as unknown as { __longTasks: number[] }).__longTasks);
    const longest = longTasks.length === 0 ? 0 : Math.max(...longTasks);
    return {
      answerBytes: ANSWER_BYTES,
      deltas: Math.ceil(ANSWER_BYTES / DELTA_BYTES),
      streamedMs: round(streamedMs),
      longTasks: longTasks.length,
      longestTaskMs: round(longest),
      targetLongestTaskMs: LONG_TASK_TARGET_MS,
      pass: longest <= LONG_TASK_TARGET_MS,
    };
  } finally {
    await page.close();
  }
}

export async function benchRendererFirstPaint(): Promise<Record<string, unknown>> {
  const browser = await launchChromium();
  let harness: UiHarness | undefined;
  try {
    harness = await startUiHarness(browser);
    const empty = seedConversation(harness, 'empty');
    const long = seedConversation(harness, 'ten thousand');
    harness.core.store(harness.ns).journal.appendMany(
      long.id,
      Array.from({ length: MESSAGES }, (_, index) => ({
        type: index % 2 === 0 ? 'user_prompt' : 'assistant_text',
        payload: { text: `Message ${index}: a reasonably ordinary line of chat, with **some** markdown and \`code\`.` },
      })),
    );
    const open = await benchOpen(harness, empty.id, long.id);
    const scroll = await benchScroll(harness, long.id);
    const streaming = await benchStreaming(harness);
    return { open, scroll, streaming, pass: open.pass === true && scroll.pass === true && streaming.pass === true };
  } finally {
    await harness?.close();
    await browser.close();
  }
}
