/**
 * Headless Linux without a Secret Service (issue 31): `ward doctor` and a command that needs the
 * keychain name both ways out for this OS only, and the first one, followed word for word, works.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';
import { WARD_BIN, ward } from '../support/ward-cli.js';

interface Check {
  readonly check: string;
  readonly status: string;
  readonly detail: string;
}

const keychainCheck = (stdout: string): Check | undefined =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Check)
    .find((check) => check.check === 'keychain');

describe('without a Secret Service', () => {
  it('test_doctor_and_set_key_name_a_keyring_for_this_shell_and_the_file_store_in_this_settings_json_and_no_other_os', async () => {
    const root = tempDir();
    const home = path.join(root, 'ward');
    // No D-Bus session bus, no display: what a server reached over SSH has.
    const env = { HOME: root, WARD_HOME: home, XDG_DATA_HOME: path.join(root, 'data') };
    const doctor = await ward(['doctor', '--json'], { env });
    const check = keychainCheck(doctor.stdout)!;
    expect(check.status).toBe('error');
    expect(check.detail).toContain(`Start a Secret Service for this shell: dbus-run-session -- sh -c 'printf %s "$KEYRING_PASSWORD" | gnome-keyring-daemon --unlock --components=secrets --daemonize >/dev/null && exec "\${SHELL:-sh}"'`);
    expect(check.detail).toContain(`opt in to the file store (0600 files, plaintext on disk) with {"credentialStore": "file"} in ${path.join(home, 'settings.json')}`);
    expect(check.detail).not.toMatch(/macOS|Windows/);

    const setKey = await ward(['provider', 'set-key'], { env, input: 'sk-ant-api03-keychain-advice-canary-0123456789\n' });
    expect(setKey.code).toBe(7);
    expect(setKey.stderr).toContain('Start a Secret Service for this shell: dbus-run-session');
    expect(setKey.stderr).toContain(path.join(home, 'settings.json'));
    expect(setKey.stderr).not.toMatch(/macOS|Windows/);

    // The advice, followed as written: the shell it starts has a keychain that answers.
    const command = /for this shell: (dbus-run-session .*?) \(Debian/.exec(check.detail)![1]!;
    const shell = path.join(root, 'shell.sh');
    fs.writeFileSync(shell, `#!/bin/sh\nexec "${process.execPath}" "${WARD_BIN}" doctor --json\n`, { mode: 0o755 });
    const { stdout } = await promisify(execFile)('sh', ['-c', command], { env: { ...env, PATH: process.env.PATH, KEYRING_PASSWORD: 'a keyring password', SHELL: shell }, timeout: 60_000 });
    expect(keychainCheck(stdout)).toMatchObject({ status: 'ok', detail: 'the OS credential store answers' });
  });
});
