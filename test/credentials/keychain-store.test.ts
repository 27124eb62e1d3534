import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import keytar from 'keytar';
import { describe, expect, it, onTestFinished } from 'vitest';
import { KeychainBackend } from '../../main/credentials/keychain-store.js';
import { resolveModelCredential, setModelCredential } from '../../main/credentials/model-credential.js';
import { keychainServiceFor, openSecretStore } from '../../main/credentials/open-store.js';
import { resolveWardHome } from '../../main/base/home.js';
import { KEYCHAIN_SERVICE, NamespacedSecretStore } from '../../main/credentials/secret-store.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { REPO_ROOT, WARD_BIN } from '../support/ward-cli.js';
import { tempDir } from '../support/temp.js';

const CANARY = 'sk-ant-api03-CANARY-keychain-0123456789';

/** Every path under `dir` with size and content hash, to prove nothing was written. */
function snapshot(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((entry) => {
      const full = path.join(entry.parentPath, entry.name);
      return entry.isFile() ? `${full} ${fs.readFileSync(full).toString('base64')}` : full;
    })
    .sort();
}

describe('OS keychain store (real gnome-keyring on a private D-Bus session)', () => {
  it('test_stores_under_a_service_for_the_data_folder_with_an_account_named_by_the_namespace_hash_never_the_name', async () => {
    const home = tempDir();
    const ns = parseNamespace('keychain-naming');
    const store = openSecretStore(home, ns, { kind: 'keychain' });
    await store.set('model-key', CANARY);
    const service = keychainServiceFor(home);
    expect(service).toMatch(/^ward\/[0-9a-f]{32}$/);
    expect(keychainServiceFor(resolveWardHome({ HOME: process.env.HOME }), { HOME: process.env.HOME })).toBe(KEYCHAIN_SERVICE);
    const entries = (await keytar.findCredentials(service)).filter((entry) => entry.password === CANARY);
    expect(entries.map((entry) => entry.account)).toEqual([`${ns.hash}/model-key`]);
    // Another data folder is another Ward: same namespace name, separate secrets.
    expect(await openSecretStore(tempDir(), ns, { kind: 'keychain' }).get('model-key')).toBeUndefined();
    expect(await store.get('model-key')).toBe(CANARY);
    expect(await store.compareAndDelete('model-key', `${CANARY}-other`)).toBe(false);
    expect(await store.get('model-key')).toBe(CANARY);
    expect(await store.compareAndDelete('model-key', CANARY)).toBe(true);
    expect(await store.get('model-key')).toBeUndefined();
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it('test_keeps_two_namespaces_apart_neither_reads_overwrites_nor_deletes_the_other_ones_entry', async () => {
    const home = tempDir();
    const work = openSecretStore(home, parseNamespace('work'), { kind: 'keychain' });
    const personal = openSecretStore(home, parseNamespace('personal'), { kind: 'keychain' });
    await setModelCredential(work, 'api-key', CANARY);
    expect(await personal.get('model-key')).toBeUndefined();
    expect(await personal.delete('model-key')).toBe(false);
    await expect(resolveModelCredential(parseNamespace('personal'), {}, { store: personal })).rejects.toMatchObject({ code: 'model_key_missing' });
    expect(await resolveModelCredential(parseNamespace('work'), {}, { store: work })).toEqual({ kind: 'api-key', value: CANARY });
    await work.delete('model-key');
  });

  it('test_bounds_a_keychain_call_that_never_answers_and_reports_keychain_unavailable_with_the_fix', async () => {
    const hanging = { getPassword: () => new Promise<null>(() => undefined), setPassword: () => new Promise<void>(() => undefined), deletePassword: () => new Promise<boolean>(() => undefined), findCredentials: () => new Promise<never>(() => undefined) };
    const store = new NamespacedSecretStore(parseNamespace('default'), new KeychainBackend({ keytar: hanging, timeoutMs: 200 }));
    await expect(store.get('model-key')).rejects.toMatchObject({ code: 'keychain_unavailable', message: expect.stringContaining('no answer within 200 ms') });
  });

  it('test_fails_with_keychain_unavailable_and_writes_no_file_anywhere_when_the_d_bus_session_is_dead', () => {
    // Outside /tmp: the child gets its own /tmp below, which would hide these folders.
    fs.mkdirSync(path.join(REPO_ROOT, 'test-artifacts'), { recursive: true });
    const root = fs.mkdtempSync(path.join(REPO_ROOT, 'test-artifacts', 'keychain-dead-bus-'));
    onTestFinished(() => fs.rmSync(root, { recursive: true, force: true }));
    const [home, privateTmp, userHome] = ['ward-home', 'tmp', 'home'].map((name) => path.join(root, name));
    for (const dir of [home!, privateTmp!, userHome!]) fs.mkdirSync(dir);
    // A checkout that itself lives under /tmp stays visible through a bind of its own (its mount point made beforehand).
    const keepVisible = REPO_ROOT.startsWith('/tmp/') ? ['--bind', REPO_ROOT, REPO_ROOT] : [];
    if (keepVisible.length > 0) fs.mkdirSync(path.join(privateTmp!, path.relative('/tmp', REPO_ROOT)), { recursive: true });
    const before = [snapshot(home!), snapshot(privateTmp!), snapshot(userHome!)];
    // bubblewrap gives the child its own /tmp (a folder we can inspect); everything else is the real system.
    const result = spawnSync(
      'bwrap',
      ['--dev-bind', '/', '/', '--bind', privateTmp!, '/tmp', ...keepVisible, '--', process.execPath, WARD_BIN, 'provider', 'set-key'],
      {
        cwd: REPO_ROOT,
        input: CANARY,
        encoding: 'utf8',
        timeout: 60_000,
        env: { PATH: process.env.PATH, HOME: userHome, WARD_HOME: home, DBUS_SESSION_BUS_ADDRESS: `unix:path=${path.join(root, 'no-such-bus')}` },
      },
    );
    expect(result.stderr).toContain('ward provider: could not write to the OS credential store');
    expect(result.stderr).toContain('Start a Secret Service for this shell: dbus-run-session');
    expect(result.stderr).toContain('Ward never falls back to plaintext');
    expect(result.status).toBe(7);
    expect(`${result.stdout}${result.stderr}`).not.toContain(CANARY);
    expect([snapshot(home!), snapshot(privateTmp!), snapshot(userHome!)]).toEqual(before);
  });
});
