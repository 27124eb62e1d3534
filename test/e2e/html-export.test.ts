/** An HTML export opened in real Chromium runs, loads and follows nothing, and shows model text as text. */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { journalEvent } from '../../common/events.js';
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
});
