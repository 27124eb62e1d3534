import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DpapiBackend, defaultDpapiHelperPath, type SpawnFn } from '../../main/credentials/dpapi-store.js';
import { NamespacedSecretStore } from '../../main/credentials/secret-store.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { REPO_ROOT } from '../support/ward-cli.js';
import { tempDir } from '../support/temp.js';

const CANARY = 'sk-ant-api03-CANARY-dpapi-0123456789';

interface Call {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  stdin: string;
}

/** Stands in for powershell.exe: records what it was given and answers like the helper would. */
function stubHelper(answer: { code: number; stdout?: string } | { error: NodeJS.ErrnoException }): { spawn: SpawnFn; calls: Call[] } {
  const calls: Call[] = [];
  const spawn = ((file: string, args: string[], options: { env: NodeJS.ProcessEnv }) => {
    const child = Object.assign(new EventEmitter(), { stdin: new PassThrough(), stdout: new PassThrough(), stderr: new PassThrough(), kill: () => true });
    const call: Call = { file, args, env: options.env, stdin: '' };
    calls.push(call);
    child.stdin.on('data', (chunk: Buffer) => (call.stdin += chunk.toString()));
    child.stdin.on('finish', () => {
      if ('error' in answer) return child.emit('error', answer.error);
      if (answer.stdout) child.stdout.write(answer.stdout);
      child.stdout.end();
      child.stderr.end(answer.code === 1 ? 'ward-dpapi: CryptographicException: the profile is not loaded\n' : '');
      setImmediate(() => child.emit('close', answer.code));
    });
    return child;
  }) as unknown as SpawnFn;
  return { spawn, calls };
}

const ns = parseNamespace('work');

describe('Windows DPAPI helper contract (stub: Windows is absent here, so powershell.exe is replaced by a recorder)', () => {
  it('test_sends_the_secret_on_stdin_only_argv_holds_the_action_and_two_hashes_env_only_allowlisted_names', async () => {
    const stub = stubHelper({ code: 0 });
    const store = new NamespacedSecretStore(ns, new DpapiBackend({ spawn: stub.spawn, env: { LOCALAPPDATA: 'C:\\Users\\a\\AppData\\Local', ANTHROPIC_API_KEY: CANARY, SECRET_THING: CANARY }, helperPath: 'C:\\Ward\\ward-dpapi.ps1' }));
    await store.set('model-key', CANARY);
    const [call] = stub.calls;
    expect(call!.file).toBe('powershell.exe');
    expect(call!.args.slice(0, 9)).toEqual(['-NoLogo', '-NoProfile', '-NonInteractive', '-ExecutionPolicy', 'Bypass', '-File', 'C:\\Ward\\ward-dpapi.ps1', '-Action', 'set']);
    expect(call!.args[9]).toBe('-Entry');
    expect(call!.args[10]).toMatch(/^[0-9a-f]{64}$/);
    expect(call!.args.slice(11)).toEqual(['-Namespace', ns.hash]);
    expect(call!.args.join(' ')).not.toContain(CANARY);
    expect(call!.args.join(' ')).not.toContain('model-key');
    expect(call!.stdin).toBe(CANARY);
    expect(Object.keys(call!.env)).toEqual(['LOCALAPPDATA']);
  });

  it('test_reads_the_secret_back_from_stdout_exit_code_3_means_no_entry', async () => {
    const found = new NamespacedSecretStore(ns, new DpapiBackend({ spawn: stubHelper({ code: 0, stdout: CANARY }).spawn }));
    expect(await found.get('model-key')).toBe(CANARY);
    const missing = new NamespacedSecretStore(ns, new DpapiBackend({ spawn: stubHelper({ code: 3 }).spawn }));
    expect(await missing.get('model-key')).toBeUndefined();
  });

  it('test_turns_a_helper_or_dpapi_failure_into_keychain_unavailable_and_writes_no_plaintext_anywhere', async () => {
    const home = tempDir();
    const failing = new NamespacedSecretStore(ns, new DpapiBackend({ spawn: stubHelper({ code: 1 }).spawn }));
    await expect(failing.set('model-key', CANARY)).rejects.toMatchObject({ code: 'keychain_unavailable', message: expect.stringContaining('Ward does not fall back to plaintext') });
    const enoent = Object.assign(new Error('spawn powershell.exe ENOENT'), { code: 'ENOENT' });
    const absent = new NamespacedSecretStore(ns, new DpapiBackend({ spawn: stubHelper({ error: enoent }).spawn }));
    await expect(absent.set('model-key', CANARY)).rejects.toMatchObject({ code: 'keychain_unavailable' });
    expect(fs.readdirSync(home)).toEqual([]);
  });

  it('test_ships_the_fixed_helper_beside_the_app_reading_stdin_and_writing_currentuser_dpapi_ciphertext_under_localappdata', () => {
    const helper = defaultDpapiHelperPath();
    expect(helper).toBe(path.join(REPO_ROOT, 'native-helpers', 'windows', 'ward-dpapi.ps1'));
    const source = fs.readFileSync(helper, 'utf8');
    expect(source).toContain('[Console]::OpenStandardInput()');
    expect(source).toContain('[Security.Cryptography.ProtectedData]::Protect($plain, $entropy, $scope)');
    expect(source).toContain('[Security.Cryptography.DataProtectionScope]::CurrentUser');
    expect(source).toContain("LocalApplicationData");
    expect(source).not.toMatch(/ConvertFrom-SecureString|AsPlainText|Out-File|Set-Content/);
  });
});
