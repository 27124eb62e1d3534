/**
 * The Connections page manages a connection's tools as `ward connections tools` does: a switch per
 * pinned tool, schema drift shown where the tool is, and Re-pin. Real Chromium, the real core,
 * a real stdio MCP server whose tool list the test rewrites.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { STDIO_SERVER } from '../connections/support.js';
import { tempDir } from '../support/temp.js';
import { screenshot, showAddForms, useUiSuite } from './harness/harness.js';

const suite = useUiSuite();

const ECHO = { name: 'echo', description: 'Echoes the text back', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };
const SHOUT = { name: 'shout', description: 'Says it louder', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };
const ECHO_WIDER = { ...ECHO, inputSchema: { type: 'object', properties: { text: { type: 'string' }, loud: { type: 'boolean' } } } };

async function addLocalServer(page: Page, name: string, toolsFile: string): Promise<void> {
  await page.getByRole('button', { name: 'Connections' }).click();
  await showAddForms(page);
  const form = page.getByRole('form', { name: 'Add a local MCP server' });
  await form.getByRole('textbox', { name: 'Name' }).fill(name);
  await form.getByRole('textbox', { name: 'Program' }).fill(process.execPath);
  await form.getByRole('textbox', { name: 'Arguments, one per line' }).fill([STDIO_SERVER, '--tools-file', toolsFile].join('\n'));
  await form.getByRole('button', { name: 'Add local server' }).click();
  await page.getByText(`Added ${name}`).waitFor();
}

describe('a connection’s tools on the Connections page, in real Chromium', () => {
  it('test_each_tool_has_a_switch_that_sticks_a_schema_change_shows_on_the_tool_and_re_pin_turns_it_back_on', async () => {
    const harness = await suite.start();
    const toolsFile = path.join(tempDir(), 'tools.json');
    fs.writeFileSync(toolsFile, JSON.stringify([ECHO, SHOUT]));
    const page = await harness.open();
    await addLocalServer(page, 'drift', toolsFile);
    const card = page.getByTestId('connection');
    await card.getByRole('button', { name: 'Check' }).click();
    await page.getByText('Checked drift').waitFor({ timeout: 30_000 });
    // With a connection on the page, the add forms wait behind "Add a connection".
    await expect(page.getByRole('form', { name: 'Add a local MCP server' }).isVisible()).resolves.toBe(false);
    await expect(page.getByText('Add a connection', { exact: true }).isVisible()).resolves.toBe(true);

    await card.locator('summary.connection-tools').click();
    const shout = card.getByRole('switch', { name: 'drift__shout' });
    await expect(shout.isChecked()).resolves.toBe(true);
    await expect(card.getByText('Echoes the text back').isVisible()).resolves.toBe(true);
    await shout.click();
    await page.getByText('Turned off drift__shout').waitFor();
    await expect.poll(() => shout.isChecked()).toBe(false);
    await expect(card.locator('summary.connection-tools').textContent()).resolves.toBe('Tools: drift__echo · 1 of 2 on');

    // The switch is the stored state: the page reloaded from main shows it off still.
    await page.getByRole('button', { name: 'Chats' }).click();
    await page.getByRole('button', { name: 'Connections' }).click();
    await card.locator('summary.connection-tools').click();
    await expect(card.getByRole('switch', { name: 'drift__shout' }).isChecked()).resolves.toBe(false);

    // The server widens echo's schema: Check finds it, the list opens by itself on the changed tool,
    // whose switch cannot turn it on until the person re-pins it.
    fs.writeFileSync(toolsFile, JSON.stringify([ECHO_WIDER, SHOUT]));
    await card.getByRole('button', { name: 'Check' }).click();
    const note = card.getByRole('note').filter({ hasText: 'Changed upstream' });
    await note.waitFor({ timeout: 30_000 });
    await expect(note.textContent()).resolves.toBe('Changed upstream: its input schema is not the one pinned, so it stays off until you re-pin it. Re-pin');
    await expect(card.getByRole('switch', { name: 'drift__echo' }).isDisabled()).resolves.toBe(true);
    await expect(card.locator('summary.connection-tools').textContent()).resolves.toBe('No tools on · 0 of 2 on · 1 tool changed upstream');
    await screenshot(page, 'connections-tool-drift');

    await note.getByRole('button', { name: 'Re-pin' }).click();
    await page.getByText('Re-pinned drift__echo').waitFor();
    await expect.poll(() => card.getByRole('note').filter({ hasText: 'Changed upstream' }).count()).toBe(0);
    await expect(card.getByRole('switch', { name: 'drift__echo' }).isChecked()).resolves.toBe(true);
    await expect(card.locator('summary.connection-tools').textContent()).resolves.toBe('Tools: drift__echo · 1 of 2 on');
  });
});
