import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeKeychain } from '../../main/credentials/keychain-probe.js';
import { tempDir } from '../support/temp.js';

describe('doctor credential-store probe', () => {
  it('test_reports_ok_when_the_os_keychain_answers_and_which_store_a_data_folder_is_configured_for', async () => {
    const home = tempDir();
    expect(await probeKeychain({ home })).toMatchObject({ check: 'keychain', status: 'ok', data: { store: 'keychain' } });
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    expect(await probeKeychain({ home })).toMatchObject({ status: 'warning', data: { store: 'file' } });
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'vault' }));
    expect(await probeKeychain({ home })).toMatchObject({ status: 'error', detail: expect.stringContaining('"credentialStore" must be one of') });
  });
});
