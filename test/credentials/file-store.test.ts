import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredStoreKind, openSecretStore } from '../../main/credentials/open-store.js';
import { parseNamespace, namespaceDir } from '../../main/namespaces/namespace.js';
import { tempDir } from '../support/temp.js';

const CANARY = 'sk-ant-api03-CANARY-file-store-0123456789';

function fileStore() {
  const home = tempDir();
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  const ns = parseNamespace('work');
  const store = openSecretStore(home, ns);
  const dir = path.join(namespaceDir(home, ns), 'secrets');
  const onlyFile = () => path.join(dir, fs.readdirSync(dir)[0]!);
  return { home, ns, store, dir, onlyFile };
}

describe('opt-in file store (C2)', () => {
  it('test_is_used_only_when_settings_json_enables_it_otherwise_the_os_keychain', () => {
    const home = tempDir();
    expect(configuredStoreKind(home)).toBe('keychain');
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ theme: 'dark' }));
    expect(configuredStoreKind(home)).toBe('keychain');
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    expect(configuredStoreKind(home)).toBe('file');
    expect(openSecretStore(home, parseNamespace('default'))).toMatchObject({ backend: { kind: 'file' } });
  });

  it('test_fails_closed_on_a_malformed_setting', () => {
    const home = tempDir();
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'plaintext' }));
    expect(() => configuredStoreKind(home)).toThrow('"credentialStore" must be one of "keychain", "file", "dpapi"');
    fs.writeFileSync(path.join(home, 'settings.json'), '{"credentialStore":');
    expect(() => configuredStoreKind(home)).toThrow('is not valid JSON');
  });

  it('test_writes_one_0600_file_in_a_0700_folder_named_by_a_hash_and_reads_it_back', async () => {
    const { store, dir, onlyFile } = fileStore();
    await store.set('model-key', CANARY);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(onlyFile()).mode & 0o777).toBe(0o600);
    expect(path.basename(onlyFile())).toMatch(/^[0-9a-f]{64}\.secret$/);
    expect(await store.get('model-key')).toBe(CANARY);
    expect(await store.compareAndDelete('model-key', 'something else')).toBe(false);
    expect(await store.compareAndDelete('model-key', CANARY)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('test_refuses_a_secret_file_with_a_looser_mode_0644_for_reading_and_writing', async () => {
    const { store, onlyFile } = fileStore();
    await store.set('model-key', CANARY);
    fs.chmodSync(onlyFile(), 0o644);
    await expect(store.get('model-key')).rejects.toMatchObject({ code: 'credential_store_insecure', message: expect.stringContaining('has mode 0644, not 0600') });
    await expect(store.set('model-key', 'new')).rejects.toMatchObject({ code: 'credential_store_insecure' });
    expect(fs.readFileSync(onlyFile(), 'utf8')).toBe(CANARY);
  });

  it('test_refuses_a_folder_with_a_looser_mode_0755', async () => {
    const { store, dir } = fileStore();
    await store.set('model-key', CANARY);
    fs.chmodSync(dir, 0o755);
    await expect(store.get('model-key')).rejects.toMatchObject({ code: 'credential_store_insecure', message: expect.stringContaining('has mode 0755, not 0700') });
  });

  it('test_refuses_a_file_or_a_folder_owned_by_another_user_this_test_runs_as_root_to_chown', async () => {
    expect(process.getuid?.()).toBe(0);
    const { store, dir, onlyFile } = fileStore();
    await store.set('model-key', CANARY);
    fs.chownSync(onlyFile(), 4242, 4242);
    await expect(store.get('model-key')).rejects.toMatchObject({ code: 'credential_store_insecure', message: expect.stringContaining('is owned by uid 4242, not by the current user (uid 0)') });
    fs.chownSync(onlyFile(), 0, 0);
    fs.chownSync(dir, 4242, 4242);
    await expect(store.get('model-key')).rejects.toMatchObject({ code: 'credential_store_insecure', message: expect.stringContaining('owned by uid 4242') });
  });

  it('test_refuses_a_symbolic_link_in_place_of_a_secret_file', async () => {
    const { store, dir, onlyFile } = fileStore();
    await store.set('model-key', CANARY);
    const target = onlyFile();
    const elsewhere = path.join(path.dirname(dir), 'elsewhere');
    fs.renameSync(target, elsewhere);
    fs.symlinkSync(elsewhere, target);
    await expect(store.get('model-key')).rejects.toMatchObject({ code: 'credential_store_insecure', message: expect.stringContaining('is a symbolic link') });
  });

  it('test_keeps_namespaces_apart_another_namespace_neither_reads_nor_deletes_the_entry', async () => {
    const { home, store } = fileStore();
    await store.set('model-key', CANARY);
    const personal = openSecretStore(home, parseNamespace('personal'));
    expect(await personal.get('model-key')).toBeUndefined();
    expect(await personal.delete('model-key')).toBe(false);
    expect(await store.get('model-key')).toBe(CANARY);
  });
});
