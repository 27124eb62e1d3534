import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { approvalTimeoutMs, sandboxModeFor } from '../../main/app/managed-settings.js';
import { WardApp } from '../../main/app/ward-app.js';
import { parsePolicy } from '../../main/policy/policy.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { tempDir } from '../support/temp.js';

const policy = (value: object) => parsePolicy(JSON.stringify({ reason: 'Example IT', ...value }), '/etc/ward/policy.json');

function settingsView(value: object, settings?: object) {
  const folder = new DataFolder(tempDir('ward-managed-'));
  if (settings !== undefined) fs.writeFileSync(path.join(folder.home, 'settings.json'), JSON.stringify(settings));
  const app = new WardApp({ folder, env: {}, policy: policy(value) });
  return app.settings.view(app.namespaces.open('default'));
}

describe('settings the admin policy manages', () => {
  it('test_credential_store_mandatory_wins_recommended_is_a_default_the_file_store_can_be_forbidden', async () => {
    expect((await settingsView({ recommended: { credentialStore: 'file' } })).keyStore).toBe('file');
    expect((await settingsView({ recommended: { credentialStore: 'file' } }, { credentialStore: 'keychain' })).keyStore).toBe('keychain');
    expect((await settingsView({ credentialStore: 'keychain' }, { credentialStore: 'file' })).keyStore).toBe('keychain');
    await expect(settingsView({ allowFileCredentialStore: false }, { credentialStore: 'file' })).rejects.toMatchObject({
      code: 'policy_refused',
      message: expect.stringMatching(/^the file credential store is not allowed \(allowFileCredentialStore is false\): refused by Example IT; remove "credentialStore" from .*settings\.json to use the OS keychain$/),
    });
  });

  it('test_sandbox_mandatory_is_a_floor_ward_sandbox_cannot_lower_recommended_is_a_default', () => {
    expect(sandboxModeFor(policy({ sandbox: 'require' }), { WARD_SANDBOX: 'off' })).toBe('require');
    expect(sandboxModeFor(policy({ sandbox: 'auto' }), { WARD_SANDBOX: 'off' })).toBe('auto');
    expect(sandboxModeFor(policy({ sandbox: 'auto' }), { WARD_SANDBOX: 'require' })).toBe('require');
    expect(sandboxModeFor(policy({ recommended: { sandbox: 'require' } }), {})).toBe('require');
    expect(sandboxModeFor(policy({ recommended: { sandbox: 'require' } }), { WARD_SANDBOX: 'off' })).toBe('off');
    expect(sandboxModeFor(null, {})).toBe('auto');
  });

  it('test_approval_timeout_mandatory_wins_over_the_host_recommended_only_fills_in', () => {
    expect(approvalTimeoutMs(policy({ approvalTimeoutSeconds: 30 }), 5_000)).toBe(30_000);
    expect(approvalTimeoutMs(policy({ recommended: { approvalTimeoutSeconds: 30 } }), 5_000)).toBe(5_000);
    expect(approvalTimeoutMs(policy({ recommended: { approvalTimeoutSeconds: 30 } }), undefined)).toBe(30_000);
    expect(approvalTimeoutMs(null, undefined)).toBe(120_000);
  });
});
