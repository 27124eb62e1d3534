import { describe, expect, it } from 'vitest';
import { resolveModelCredential } from '../../main/credentials/model-credential.js';
import { openSecretStore } from '../../main/credentials/open-store.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { expectNoCanary, expectNoCanaryInFiles, runWard, wardEnv } from '../auth/support.js';
import { tempDir } from '../support/temp.js';

const API_KEY = 'sk-ant-api03-CANARY-model-key-0123456789abcdef';
const OAUTH_TOKEN = 'sk-ant-oat01-CANARY-subscription-token-0123456789';

describe('ward provider set-key / show and resolveModelCredential', () => {
  it('test_stores_the_key_read_from_stdin_shows_only_that_one_is_set_and_its_kind_and_the_runner_gets_it_from_the_keychain', async () => {
    const home = tempDir();
    const env = wardEnv(home);
    const set = await runWard(['provider', 'set-key'], env, `${API_KEY}\n`);
    expect(set.stdout).toContain('stored the API key for namespace default (the CLI receives it as ANTHROPIC_API_KEY)');
    expect(set.code).toBe(0);
    const show = await runWard(['provider', 'show'], env);
    expect(show.stdout).toBe('an API key is stored for namespace default\n');
    const json = await runWard(['provider', 'show', '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual({ namespace: 'default', set: true, kind: 'api-key' });

    // Keychain first: a different key in the environment does not win over the stored one.
    const ns = parseNamespace('default');
    const store = openSecretStore(home, ns, { kind: 'keychain' });
    expect(await resolveModelCredential(ns, { ANTHROPIC_API_KEY: 'sk-env-key' }, { store })).toEqual({ kind: 'api-key', value: API_KEY });

    expectNoCanary([set.stdout, set.stderr, show.stdout, show.stderr, json.stdout, json.stderr], [API_KEY]);
    expectNoCanaryInFiles(home, [API_KEY]);
    const deleted = await runWard(['provider', 'delete-key'], env);
    expect(deleted.stdout).toBe('deleted the model credential of namespace default\n');
    expect((await runWard(['provider', 'show'], env)).stdout).toBe('no model credential is stored for namespace default\n');
  });

  it('test_refuses_a_key_given_as_an_argument_without_echoing_it', async () => {
    const home = tempDir();
    const result = await runWard(['provider', 'set-key', API_KEY], wardEnv(home));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('takes no value as an argument: a key in argv is visible in the process list and shell history; pipe it on stdin instead');
    expectNoCanary([result.stdout, result.stderr], [API_KEY]);
    const misplaced = await runWard(['provider', API_KEY], wardEnv(home));
    expect(misplaced.code).toBe(2);
    const kind = await runWard(['provider', 'set-key', '--kind', API_KEY], wardEnv(home), 'x');
    expect(kind.code).toBe(2);
    expectNoCanary([misplaced.stderr, misplaced.stdout, kind.stderr, kind.stdout], [API_KEY]);
  });

  it('test_passes_a_subscription_token_as_claude_code_oauth_token_kind_inferred_from_the_token_or_given', async () => {
    const home = tempDir();
    const env = wardEnv(home);
    expect((await runWard(['provider', 'set-key'], env, OAUTH_TOKEN)).stdout).toContain('stored the OAuth token');
    const ns = parseNamespace('default');
    const store = openSecretStore(home, ns, { kind: 'keychain' });
    expect(await resolveModelCredential(ns, {}, { store })).toEqual({ kind: 'oauth-token', value: OAUTH_TOKEN });
    expect((await runWard(['provider', 'set-key', '--kind', 'oauth-token'], env, 'custom-token-value')).code).toBe(0);
    expect(await resolveModelCredential(ns, {}, { store })).toEqual({ kind: 'oauth-token', value: 'custom-token-value' });
    await store.delete('model-key');
  });

  it('test_rejects_empty_or_multi_word_input_on_stdin', async () => {
    const home = tempDir();
    const empty = await runWard(['provider', 'set-key'], wardEnv(home), '');
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no key on stdin');
    const two = await runWard(['provider', 'set-key'], wardEnv(home), `${API_KEY} ${API_KEY}`);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain('give exactly one key');
    expectNoCanary([two.stderr, two.stdout], [API_KEY]);
  });

  it('test_uses_the_environment_only_when_nothing_is_stored_and_says_how_to_set_a_key_when_neither_has_one', async () => {
    const home = tempDir();
    const ns = parseNamespace('env-only');
    const store = openSecretStore(home, ns, { kind: 'keychain' });
    expect(await resolveModelCredential(ns, { ANTHROPIC_API_KEY: 'sk-env' }, { store })).toEqual({ kind: 'api-key', value: 'sk-env' });
    expect(await resolveModelCredential(ns, { CLAUDE_CODE_OAUTH_TOKEN: 'oat-env' }, { store })).toEqual({ kind: 'oauth-token', value: 'oat-env' });
    await expect(resolveModelCredential(ns, {}, { store })).rejects.toMatchObject({
      code: 'model_key_missing',
      message: 'no model credential for namespace env-only: store one with "ward --namespace env-only provider set-key" (it reads the key from stdin), or set ANTHROPIC_API_KEY',
    });
  });

  it('test_keeps_namespaces_apart_through_the_command_a_key_set_in_work_is_not_visible_in_personal', async () => {
    const home = tempDir();
    const env = wardEnv(home);
    for (const name of ['work', 'personal']) expect((await runWard(['namespace', 'create', name], env)).code).toBe(0);
    expect((await runWard(['provider', 'set-key', '--namespace', 'work'], env, API_KEY)).code).toBe(0);
    expect((await runWard(['provider', 'show', '--namespace', 'personal'], env)).stdout).toBe('no model credential is stored for namespace personal\n');
    expect((await runWard(['provider', 'show', '--namespace', 'work'], env)).stdout).toBe('an API key is stored for namespace work\n');
    expectNoCanaryInFiles(home, [API_KEY]);
    expect((await runWard(['provider', 'delete-key', '--namespace', 'work'], env)).code).toBe(0);
  });
});
