import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { namespaceDir } from '../../main/namespaces/namespace.js';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { startProtectedServer } from '../fixtures/mcp-oauth/protected-server.js';
import { startHttpFixture } from '../fixtures/mcp-servers/http.js';
import { FIXTURE_STDIO } from '../app/runs/agents.js';
import { fixtureTools } from '../fixtures/mcp-servers/tools.js';
import { seedChangedRun } from './harness/changes.js';
import { addRemoteConnection, CANARY_KEY, expectFieldError, publishToolAgent, seedConversation, showAddForms, startChat, timelineOf, useUiSuite, type UiHarness } from './harness/harness.js';
import { auditScreen } from './harness/axe.js';

const suite = useUiSuite();
let harness: UiHarness | undefined;

const TYPED_KEY = 'sk-ant-typed-in-settings-3b9e27c1d04f';

/** The Connections page's "Add a local MCP server" form, filled in to start the fixture stdio server under `name`. */
async function localServerForm(page: Page, name: string) {
  await page.getByRole('button', { name: 'Connections' }).click();
  await showAddForms(page);
  const form = page.getByRole('form', { name: 'Add a local MCP server' });
  await form.getByRole('textbox', { name: 'Name' }).fill(name);
  await form.getByRole('textbox', { name: 'Program' }).fill(process.execPath);
  await form.getByRole('textbox', { name: 'Arguments, one per line' }).fill(['--import', 'tsx', FIXTURE_STDIO].join('\n'));
  return form;
}

describe('the other screens in real Chromium', () => {
  it('test_settings_the_provider_and_a_key_typed_in_the_window_drive_the_next_run_the_key_never_comes_back', async () => {
    harness = await suite.start({ script: [{ blocks: [{ type: 'text', text: 'Hello with the stored key.' }] }] });
    const page = await harness.open();
    await page.getByRole('button', { name: 'Settings' }).click();
    await expect.poll(() => page.getByTestId('key-state').textContent()).toBe('No key is stored.');
    await expect(page.getByText(harness.home).isVisible()).resolves.toBe(true);

    await page.getByRole('textbox', { name: 'Endpoint' }).fill(harness.provider.url);
    await page.getByRole('textbox', { name: 'Model' }).fill('claude-e2e-model');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await page.getByText('Model provider saved').waitFor();
    // Test connection reaches the provider with the saved model and says so (nothing is generated).
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect.poll(() => page.getByTestId('provider-test').textContent()).toMatch(/^Connected: 127\.0\.0\.1:\d+ answered for model claude-e2e-model in \d+ ms\.$/);

    await page.getByLabel('New key').fill(TYPED_KEY);
    await page.getByRole('button', { name: 'Store key' }).click();
    await page.getByText('Key stored', { exact: true }).waitFor();
    await expect.poll(() => page.getByTestId('key-state').textContent()).toBe("A key is stored in Ward's file store.");
    await expect(page.getByLabel('New key').inputValue()).resolves.toBe('');
    await auditScreen(page, 'settings');

    // A plain http endpoint off loopback is refused with a clear message (L1).
    await page.getByRole('textbox', { name: 'Endpoint' }).fill('http://example.com');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await expectFieldError(page.getByRole('textbox', { name: 'Endpoint' }), /http:\/\/ is allowed only for loopback hosts/);

    // The next run uses the stored key (not the environment's) and the saved model.
    await page.getByRole('button', { name: 'Chats' }).click();
    await startChat(page, 'default', 'hello');
    await timelineOf(page).getByText('Hello with the stored key.').waitFor();
    const [request] = harness.provider.conversationRequests();
    expect(request!.headers['x-api-key']).toBe(TYPED_KEY);
    expect(request!.body!.model).toBe('claude-e2e-model');

    // The key went renderer → main only: no result, push or page text carries it back.
    const crossed = [...harness.results, ...harness.pushed.map((event) => JSON.stringify(event))].join('\n');
    expect(crossed).not.toContain(TYPED_KEY);
    expect(crossed).not.toContain(CANARY_KEY);
    await expect(page.content()).resolves.not.toContain(TYPED_KEY);
    // Nor is it in the database or the model profile file.
    const dir = namespaceDir(harness.home, harness.ns);
    for (const file of ['ward.db', 'model-profiles.json']) expect(fs.readFileSync(path.join(dir, file)).includes(TYPED_KEY)).toBe(false);

    await page.getByRole('button', { name: 'Settings' }).click();
    await page.getByRole('button', { name: 'Remove key' }).click();
    await page.getByRole('alertdialog', { name: 'Remove the model key?' }).getByRole('button', { name: 'Remove key' }).click();
    await page.getByText('Key removed').waitFor();
    await expect.poll(() => page.getByTestId('key-state').textContent()).toBe('No key is stored.');
  });

  it('test_agents_edit_instructions_keep_a_subset_of_the_pinned_tools_publish_a_new_version_grant_and_revoke_permissions', async () => {
    harness = await suite.start();
    await publishToolAgent(harness);
    const page = await harness.open();
    await page.getByRole('button', { name: 'Agents' }).click();
    await page.getByRole('button', { name: 'tooly' }).click();
    await expect(page.getByRole('textbox', { name: 'Instructions' }).inputValue()).resolves.toBe('Use the tools when asked.');
    await page.getByRole('textbox', { name: 'Instructions' }).fill('Use only the echo tool.');
    await page.getByRole('checkbox', { name: /slow/ }).uncheck();
    await page.getByRole('button', { name: 'Publish new version' }).click();
    await page.getByText('Published tooly version 2').waitFor();

    // Permissions for every conversation with this agent, Deno-style; revocable.
    const permissions = page.getByRole('region', { name: 'Permissions' });
    // Ward's own data folder is refused (issue 12 #2); a project folder outside it is granted.
    await permissions.getByRole('textbox', { name: 'Entries' }).fill(harness.home);
    await permissions.getByRole('button', { name: 'Grant' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain("Ward's data folder");
    await expectFieldError(permissions.getByRole('textbox', { name: 'Entries' }), /Ward's data folder/);
    const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ward-e2e-project-')));
    await permissions.getByRole('textbox', { name: 'Entries' }).fill(project);
    await permissions.getByRole('button', { name: 'Grant' }).click();
    await page.getByText('Granted allow read').waitFor();
    await permissions.getByRole('combobox', { name: 'Allow or deny' }).selectOption('deny');
    await permissions.getByRole('combobox', { name: 'Kind' }).selectOption('net');
    await permissions.getByRole('textbox', { name: 'Entries' }).fill('evil.example.com');
    await permissions.getByRole('button', { name: 'Grant' }).click();
    await page.getByText('Granted deny net').waitFor();
    await expect(page.getByTestId('agent-permission').allTextContents()).resolves.toEqual([`allow read ${project} Revoke`, 'deny net evil.example.com Revoke']);
    // A malformed entry is refused with the parser's own message.
    await permissions.getByRole('combobox', { name: 'Kind' }).selectOption('net');
    await permissions.getByRole('textbox', { name: 'Entries' }).fill('http://bad host/');
    await permissions.getByRole('button', { name: 'Grant' }).click();
    // In the form's words, not the terminal's flag.
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/^Deny net: /);
    await auditScreen(page, 'agents');
    await page.getByTestId('agent-permission').filter({ hasText: 'deny net' }).getByRole('button', { name: 'Revoke' }).click();
    await page.getByText('Revoked net evil.example.com').waitFor();
    await expect(page.getByTestId('agent-permission').count()).resolves.toBe(1);
    const store = harness.core.store(harness.ns);
    const active = new GrantStore(store.db).activeRules('no-conversation', store.agents.get('tooly').agentId);
    expect(active).toEqual([expect.objectContaining({ effect: 'allow', kind: 'read', value: project })]);
    const latest = harness.core.store(harness.ns).agents.get('tooly');
    expect(latest.version).toBe(2);
    expect(latest.spec).toMatchObject({ instructions: 'Use only the echo tool.', tools: [{ exposedName: 'fixture__echo' }] });
    expect((latest.spec as { tools: unknown[] }).tools).toHaveLength(1);
  });

  it('test_agents_tools_of_a_remote_connection_are_offered_as_checkboxes_the_checked_one_is_pinned_in_the_published_version', async () => {
    harness = await suite.start();
    const server = await startHttpFixture();
    try {
      const page = await harness.open();
      await page.getByRole('button', { name: 'Connections' }).click();
      await addRemoteConnection(page, 'tracker', server.url);
      await page.getByTestId('connection').getByRole('button', { name: 'Check' }).click();
      await page.getByText('Checked tracker').waitFor();

      await page.getByRole('button', { name: 'Agents' }).click();
      const offered = page.getByRole('group', { name: 'tracker' });
      await offered.getByRole('checkbox', { name: 'echo from tracker' }).waitFor();
      // Its five tools, and one checkbox for all of them.
      await expect(offered.getByRole('checkbox', { name: /from tracker$/ }).count()).resolves.toBe(fixtureTools(1).length);
      await expect(offered.getByRole('checkbox', { name: 'every tool of tracker' }).isChecked()).resolves.toBe(false);
      await page.getByRole('textbox', { name: 'Name' }).fill('reader');
      // Keyboard: the checkbox takes focus and Space checks it.
      await offered.getByRole('checkbox', { name: 'echo from tracker' }).focus();
      await page.keyboard.press('Space');
      await expect(offered.getByRole('checkbox', { name: 'echo from tracker' }).isChecked()).resolves.toBe(true);
      await page.getByRole('button', { name: 'Publish new version' }).click();
      await page.getByText('Published reader version 1').waitFor();

      // The new version lists the tool among its pinned tools, and the agent list counts it.
      const pinned = page.getByRole('group', { name: 'Tools pinned in this agent' });
      await expect(pinned.getByRole('checkbox', { name: /^tracker__echo/ }).isChecked()).resolves.toBe(true);
      await expect(offered.getByRole('checkbox', { name: 'echo from tracker' }).count()).resolves.toBe(0);
      await expect(page.getByRole('listitem').filter({ hasText: 'reader' }).textContent()).resolves.toMatch(/v1 · 1 tool · /);
      await auditScreen(page, 'agents-connection-tools');
      const spec = harness.core.store(harness.ns).agents.get('reader').spec as { tools: { exposedName: string }[] };
      expect(spec.tools.map((tool) => tool.exposedName)).toEqual(['tracker__echo']);
    } finally {
      await server.close();
    }
  });

  it('test_connections_add_a_remote_mcp_server_check_it_health_and_pinned_tools_remove_it', async () => {
    harness = await suite.start();
    const server = await startHttpFixture();
    try {
      const page = await harness.open();
      await page.getByRole('button', { name: 'Connections' }).click();
      await page.getByText('No connections in this namespace yet.').waitFor();
      await addRemoteConnection(page, 'tracker', server.url);
      await page.getByText('Added tracker').waitFor();
      const card = page.getByTestId('connection');
      await expect(card.locator('.pill').textContent()).resolves.toBe('Not checked yet');

      await card.getByRole('button', { name: 'Check' }).click();
      await page.getByText('Checked tracker').waitFor();
      await expect.poll(() => card.locator('.pill').textContent()).toBe('Connected');
      await expect(card.locator('.connection-tools').textContent()).resolves.toMatch(/^Tools: .*echo.*slow/);
      await auditScreen(page, 'connections');

      // A bad address is refused with a clear message, before anything is stored.
      await addRemoteConnection(page, 'bad', 'http://example.com/mcp');
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/http/);
      await expectFieldError(page.getByRole('form', { name: 'Add a remote MCP server' }).getByRole('textbox', { name: 'Server URL' }), /http/);
      await expect(page.getByTestId('connection').count()).resolves.toBe(1);

      await card.getByRole('button', { name: 'Remove' }).click();
      await page.getByRole('alertdialog', { name: 'Remove tracker?' }).getByRole('button', { name: 'Remove' }).click();
      await page.getByText('Removed tracker').waitFor();
      await expect(page.getByTestId('connection').count()).resolves.toBe(0);
    } finally {
      await server.close();
    }
  });

  it('test_connections_a_local_stdio_server_is_added_with_its_arguments_and_a_secret_variable_whose_value_never_comes_back', async () => {
    harness = await suite.start();
    const secret = 'fixture-secret-value-7f3a9c21e5d04b86';
    const page = await harness.open();
    const form = await localServerForm(page, 'local');
    await form.getByRole('button', { name: 'Add a secret variable' }).click();
    await form.getByRole('textbox', { name: 'Variable 1 name' }).fill('FIXTURE_TOKEN');
    await form.getByLabel('Variable 1 value').fill(secret);
    await form.getByRole('button', { name: 'Add local server' }).click();
    await page.getByText('Added local').waitFor();
    // The forms fold away once the page has a connection; opened again, this one is empty.
    await expect.poll(() => form.isVisible()).toBe(false);
    await showAddForms(page);
    await expect(form.getByRole('textbox', { name: 'Program' }).inputValue()).resolves.toBe('');
    const card = page.getByTestId('connection');
    await card.getByRole('button', { name: 'Check' }).click();
    await page.getByText('Checked local').waitFor({ timeout: 30_000 });
    await expect.poll(() => card.locator('.pill').textContent()).toBe('Connected');
    await expect(card.locator('.connection-tools').textContent()).resolves.toMatch(/^Tools: .*local__echo/);
    await auditScreen(page, 'connections-local');
    // The value went renderer → main → the secret store only: not back, not into the database.
    const crossed = [...harness.results, ...harness.pushed.map((event) => JSON.stringify(event))].join('\n');
    expect(crossed).not.toContain(secret);
    await expect(page.content()).resolves.not.toContain(secret);
    expect(fs.readFileSync(path.join(namespaceDir(harness.home, harness.ns), 'ward.db')).includes(secret)).toBe(false);
  });

  it('test_connections_a_local_server_added_to_run_in_the_os_sandbox_says_what_it_reaches_and_writes', async () => {
    harness = await suite.start();
    const page = await harness.open();
    const form = await localServerForm(page, 'boxed');
    await form.getByRole('checkbox', { name: 'Run it in the OS sandbox' }).check();
    await form.getByRole('textbox', { name: 'Hosts it may reach, one per line' }).fill('api.example.com\n*.example.org:443');
    await form.getByRole('button', { name: 'Add local server' }).click();
    await page.getByText('Added boxed').waitFor();
    await expect.poll(() => form.isVisible()).toBe(false);
    await showAddForms(page);
    await expect(form.getByRole('checkbox', { name: 'Run it in the OS sandbox' }).isChecked()).resolves.toBe(false);
    await expect(page.getByTestId('connection').textContent()).resolves.toContain('Runs in the sandbox: network only api.example.com, *.example.org:443; files: a private folder of its own (read-write).');
    const stored = harness.core.store(harness.ns).db.prepare<[], { sandbox: string }>("SELECT sandbox FROM connections WHERE name = 'boxed'").get();
    expect(JSON.parse(stored!.sandbox)).toEqual({ net: ['api.example.com', '*.example.org:443'], folder: null });
  });

  it('test_connections_a_protected_server_shows_signed_out_until_the_person_signs_in_through_the_browser', async () => {
    harness = await suite.start();
    const remote = await startProtectedServer();
    try {
      const page = await harness.open();
      await page.getByRole('button', { name: 'Connections' }).click();
      await addRemoteConnection(page, 'remote', remote.url);
      const card = page.getByTestId('connection');
      await card.getByRole('button', { name: 'Check' }).click();
      await page.getByText('Checked remote').waitFor();
      await expect(card.locator('.pill').textContent()).resolves.toBe('Signed out');

      await card.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('Signed in to remote').waitFor({ timeout: 30_000 });
      expect(harness.signIns).toHaveLength(1);
      expect(harness.signIns[0]!.searchParams.get('code_challenge_method')).toBe('S256');
      await card.getByRole('button', { name: 'Check' }).click();
      await page.getByText('Checked remote').waitFor();
      await expect(card.locator('.pill').textContent()).resolves.toBe('Connected');
      await expect(card.locator('.connection-tools').textContent()).resolves.toMatch(/^Tools: .*remote__echo/);
      // No token reached the page.
      const crossed = [...harness.results, ...harness.pushed.map((event) => JSON.stringify(event))].join('\n');
      expect(crossed).not.toMatch(/access_token|refresh_token|Bearer /);
      await auditScreen(page, 'connections-signed-in');

      // Sign out forgets the tokens: the server asks for a sign-in again, even after a check.
      await card.getByRole('button', { name: 'Sign out' }).click();
      await page.getByText('Signed out of remote').waitFor();
      await expect.poll(() => card.locator('.pill').textContent()).toBe('Signed out');
      await card.getByRole('button', { name: 'Check' }).click();
      await page.getByText('Checked remote').waitFor();
      await expect.poll(() => card.locator('.pill').textContent()).toBe('Signed out');
      await card.getByRole('button', { name: 'Sign in' }).waitFor();
    } finally {
      await remote.close();
    }
  });

  it('test_sessions_search_narrows_the_list_the_namespace_switcher_shows_only_that_namespace', async () => {
    harness = await suite.start();
    seedConversation(harness, 'Quarterly report draft');
    seedConversation(harness, 'Holiday plans');
    harness.core.createNamespace('work');
    const page = await harness.open();
    const sessions = page.getByRole('list', { name: 'Sessions' });
    await sessions.getByText('Holiday plans').waitFor();
    await page.getByRole('searchbox', { name: 'Search sessions' }).fill('report');
    await sessions.getByText('Holiday plans').waitFor({ state: 'detached' });
    await expect(sessions.getByRole('button').allTextContents()).resolves.toEqual([expect.stringContaining('Quarterly report draft')]);
    await auditScreen(page, 'sessions-search');

    await page.getByRole('combobox', { name: 'Namespace' }).selectOption('work');
    await sessions.getByText('No matching sessions').waitFor();
    await page.getByRole('searchbox', { name: 'Search sessions' }).fill('');
    await sessions.getByText('No sessions yet').waitFor();
  });

  it('test_a_namespace_fixed_for_this_ward_is_the_only_one_offered_any_other_fails_closed', async () => {
    harness = await suite.start({ env: { WARD_NAMESPACE: 'team' } });
    const page = await harness.open();
    const select = page.getByRole('combobox', { name: 'Namespace' });
    await page.getByText('No sessions yet').waitFor();
    await expect(select.locator('option').allTextContents()).resolves.toEqual(['team']);
    await expect(page.locator('[role=alert]').count()).resolves.toBe(0);
    const call = (channel: string, payload: unknown) =>
      page.evaluate(([c, p]) => (window as unknown as { __wardInvoke(c: unknown, p: unknown): Promise<unknown> }).__wardInvoke(c, p), [channel, payload] as const);
    await expect(call('conversations.list', { namespace: 'default' })).resolves.toEqual({
      ok: false,
      error: { code: 'namespace_conflict', message: 'this Ward is fixed to namespace team (admin policy or WARD_NAMESPACE); "default" is not available' },
    });
    await expect(call('namespaces.create', { name: 'other' })).resolves.toMatchObject({ ok: false, error: { code: 'namespace_conflict' } });
    // The fixed namespace works: a chat created there lives in its own database.
    await page.getByRole('button', { name: 'New chat' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'New chat' }).waitFor();
    expect(harness.core.listNamespaces().map((ns) => ns.name)).toEqual(['default', 'team']);
  });

  it('test_is_readable_in_the_dark_theme_and_usable_from_the_keyboard', async () => {
    harness = await suite.start();
    const conversation = seedConversation(harness, 'Dark mode chat');
    harness.core.store(harness.ns).journal.appendMany(conversation.id, [
      { type: 'user_prompt', payload: { text: 'Is this readable at night?' } },
      { type: 'assistant_text', payload: { text: 'Yes: the colours follow **prefers-color-scheme**.' } },
    ]);
    const page = await harness.open();
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.getByRole('button', { name: /Dark mode chat/ }).click();
    await timelineOf(page).getByText('Yes: the colours follow').waitFor();
    const colors = await page.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    expect(colors).toEqual(['rgb(21, 24, 28)', 'rgb(230, 232, 235)']);
    await auditScreen(page, 'chat-keyboard');

    // Keyboard: the message box takes focus by Tab order and Enter sends nothing while empty.
    await page.getByRole('textbox', { name: 'Message' }).focus();
    await page.keyboard.press('Enter');
    await expect(page.getByRole('button', { name: 'Send' }).isDisabled()).resolves.toBe(true);
    // F6 moves between the panes: back from the message box to the conversation, on to the navigation rail.
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent);
    await page.keyboard.press('Shift+F6');
    await expect(focused()).resolves.toBe('Conversation');
    await page.keyboard.press('F6');
    await expect(focused()).resolves.toBe('Message');
    await page.keyboard.press('F6');
    await expect(focused()).resolves.toBe('Chats');
  });

  it('test_the_diff_viewer_at_800x600_and_1600x1000_light_and_dark', async () => {
    harness = await suite.start();
    const dir = suite.tempDir('ward-e2e-screens-diff-');
    fs.writeFileSync(path.join(dir, 'app.ts'), ['export function answer(): number {', '  return 41;', '}', ''].join('\n'));
    fs.writeFileSync(path.join(dir, '.env'), 'TOKEN=kept-out\n');
    await seedChangedRun(harness, 'Changed files', dir, () => {
      fs.writeFileSync(path.join(dir, 'app.ts'), ['/** The answer, checked. */', 'export function answer(): number {', '  return 42; // was 41', '}', ''].join('\n'));
      fs.writeFileSync(path.join(dir, 'README.md'), '# Notes\n');
      fs.writeFileSync(path.join(dir, '.env'), 'TOKEN=still-kept-out\n');
    });
    const page = await harness.open();
    await page.getByRole('button', { name: /Changed files/ }).click();
    await timelineOf(page).getByRole('button', { name: /3 files changed/ }).click();
    const viewer = page.getByRole('dialog', { name: /3 files changed/ });
    await viewer.getByRole('button', { name: /app\.ts/ }).click();
    await viewer.locator('.diff-add .hl-comment').first().waitFor();
    await auditScreen(page, 'diff-viewer');
  });
});
