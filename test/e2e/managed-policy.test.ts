import { describe, expect, it } from 'vitest';
import { freePort } from '../support/rsyslog.js';
import { policyFile } from '../support/system-policy.js';
import { publishToolAgent, startChat, useUiSuite } from './harness/harness.js';
import { auditScreen } from './harness/axe.js';

const suite = useUiSuite();

/** The admin policy WARD_POLICY names (it can only restrict, as a system one would). */
const adminPolicy = {
  reason: 'Example Corp IT',
  providers: ['127.0.0.1'],
  models: ['claude-e2e-*'],
  credentialStore: 'file',
  managedConnectionsOnly: true,
  managedConnections: [{ name: 'tracker', url: 'https://mcp.example.com/mcp' }],
  colour: 'blue',
  recommended: { approvalTimeoutSeconds: 300 },
};

describe('the desktop under an admin policy, in real Chromium', () => {
  it('test_managed_settings_show_locks_with_their_source_and_the_policy_page_lists_every_key', async () => {
    const file = policyFile(adminPolicy);
    const harness = await suite.start({ env: { WARD_POLICY: file } });
    const page = await harness.open();

    await page.getByRole('button', { name: 'Policy' }).click();
    const rows = page.getByTestId('policy-setting');
    await rows.first().waitFor();
    await expect(page.getByText(`Managed by your organization, from ${file}.`).isVisible()).resolves.toBe(true);
    await expect(page.getByText('Changes to the policy take effect when Ward next starts.').isVisible()).resolves.toBe(true);
    await expect(rows.filter({ hasText: 'providers' }).textContent()).resolves.toBe(`Allowed model providers providers["127.0.0.1"] mandatory${file}: providers`);
    await expect(rows.filter({ hasText: 'approvalTimeoutSeconds' }).textContent()).resolves.toContain(`300recommended${file}: recommended.approvalTimeoutSeconds`);
    await expect(rows.filter({ hasText: 'namespace' }).first().textContent()).resolves.toContain('not set (any namespace)');
    await expect(page.getByRole('status').filter({ hasText: 'colour' }).textContent()).resolves.toBe(`${file}: colour: unknown key, ignored`);
    await expect(page.getByRole('status').filter({ hasText: 'managedConnections' }).textContent()).resolves.toBe(
      `${file}: managedConnections: ignored: a file WARD_POLICY names may only narrow the policy, and managedConnections adds to it; it comes only from the admin's sources`,
    );
    await auditScreen(page, 'policy');

    await page.getByRole('button', { name: 'Settings' }).click();
    await expect(page.getByTestId('managed-providers').textContent()).resolves.toBe(` Managed by your organization: providers limited to 127.0.0.1 · ${file}: providers`);
    await expect(page.getByTestId('managed-models').textContent()).resolves.toBe(` Managed by your organization: models limited to claude-e2e-* · ${file}: models`);
    await expect(page.getByTestId('managed-credentialStore').textContent()).resolves.toBe(` Managed by your organization: keys are kept in Ward's file store · ${file}: credentialStore`);
    // A model outside the list is refused by main, naming the policy.
    await page.getByRole('textbox', { name: 'Endpoint' }).fill(harness.provider.url);
    await page.getByRole('textbox', { name: 'Model' }).fill('claude-other');
    await page.getByRole('button', { name: 'Save provider' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe('model "claude-other" is not allowed (allowed: claude-e2e-*): refused by Example Corp IT');
    await auditScreen(page, 'settings-managed');

    await page.getByRole('button', { name: 'Connections' }).click();
    await expect(page.getByRole('button', { name: 'Add connection' }).isDisabled()).resolves.toBe(true);
    await expect(page.getByTestId('managed-managedConnectionsOnly').textContent()).resolves.toBe(` Managed by your organization: only the connections your organization defines may be used · ${file}: managedConnectionsOnly`);
    // A managed connection in a file WARD_POLICY names adds, so it is ignored (the Policy page warned): none is listed.
    await expect(page.getByTestId('connection').count()).resolves.toBe(0);
    await auditScreen(page, 'connections-managed');
  });

  it('test_the_policy_page_says_where_the_audit_sink_sends_how_many_events_wait_and_why_they_are_not_delivered', async () => {
    // A loopback port nothing listens on: the sink refuses every batch, and the events wait.
    const port = await freePort();
    const file = policyFile({ reason: 'Example Corp IT', auditSink: { syslog: { host: '127.0.0.1', port, tls: false } } });
    const harness = await suite.start({ env: { WARD_POLICY: file, WARD_SANDBOX: 'off' }, script: [{ blocks: [{ type: 'text', text: 'Logged.' }] }] });
    await publishToolAgent(harness);
    const page = await harness.open();
    await startChat(page, 'tooly', 'say something for the audit');
    await page.getByText('Logged.').first().waitFor();

    await page.getByRole('button', { name: 'Policy' }).click();
    const line = page.getByTestId('audit-sink');
    await line.waitFor();
    // The page shows the sink as it was when it opened; the loop's first attempt can come a moment
    // after the turn (on a loaded machine): open the page again, as a person would, until it has one.
    const deadline = Date.now() + 30_000;
    while (!((await line.textContent()) ?? '').includes('not delivering') && Date.now() < deadline) {
      await page.getByRole('button', { name: 'Settings' }).click();
      await page.getByRole('button', { name: 'Policy' }).click();
      await line.waitFor();
    }
    await expect(line.textContent()).resolves.toMatch(new RegExp(`^Audit: sending to syslog 127\\.0\\.0\\.1:${port} in plain TCP \\(loopback\\) — [1-9]\\d* waiting, the oldest from .+ · not delivering: .*(refused|ECONNREFUSED)`));
    await auditScreen(page, 'policy-audit-failing');
  });
});
