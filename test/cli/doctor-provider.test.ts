/**
 * `ward doctor --provider` (issue 16 #6): one free token count against the namespace's model
 * provider with its stored key, as the desktop's "Test connection" does; each outcome has its
 * own exit code and the key never shows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoCanary, runWard, wardEnv } from '../auth/support.js';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';

const API_KEY = 'sk-ant-api03-CANARY-doctor-provider-0123456789';
const MODEL = 'claude-doctor-test';

let provider: ModelProvider | undefined;
afterEach(async () => {
  await provider?.close();
  provider = undefined;
});

async function withKey(baseUrl: string): Promise<NodeJS.ProcessEnv> {
  const env = wardEnv(tempDir(), { WARD_MODEL_BASE_URL: baseUrl, WARD_MODEL: MODEL });
  expect((await runWard(['provider', 'set-key'], env, `${API_KEY}\n`)).code).toBe(0);
  return env;
}

describe('ward doctor --provider', () => {
  it('test_a_provider_that_accepts_the_stored_key_is_ok_after_one_token_count_and_nothing_is_generated', async () => {
    provider = await startModelProvider([], { apiKey: API_KEY });
    const env = await withKey(provider.url);
    const result = await runWard(['doctor', '--provider'], env);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^ok +model provider \\(default\\) +${provider.url.slice('http://'.length)} answered for model ${MODEL} in \\d+ ms\\.$`, 'm'));
    expect(provider.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /v1/messages/count_tokens']);
    expect(provider.requests[0]!.body?.model).toBe(MODEL);
    expectNoCanary([result.stdout, result.stderr], [API_KEY]);
  });

  it('test_with_the_file_store_the_admin_policy_chooses_the_stored_key_is_found_as_runs_find_it', async () => {
    // "Test connection" read the key without the policy's store: the OS keychain, unreachable here.
    provider = await startModelProvider([], { apiKey: API_KEY });
    const home = tempDir();
    const policy = path.join(home, 'policy.json');
    fs.writeFileSync(policy, JSON.stringify({ credentialStore: 'file' }));
    const env = wardEnv(home, { WARD_MODEL_BASE_URL: provider.url, WARD_MODEL: MODEL, WARD_POLICY: policy, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' });
    expect((await runWard(['provider', 'set-key'], env, `${API_KEY}\n`)).code).toBe(0);
    const result = await runWard(['doctor', '--provider'], env);
    expect(result.stdout).toMatch(/^ok +model provider \(default\) +\S+ answered for model claude-doctor-test in \d+ ms\.$/m);
    expect(provider.requests.map((request) => request.headers['x-api-key'])).toEqual([API_KEY]);
    expectNoCanary([result.stdout, result.stderr], [API_KEY]);
  });

  it('test_a_provider_that_refuses_the_key_reports_its_http_status_and_exits_1', async () => {
    provider = await startModelProvider([], { apiKey: 'sk-ant-api03-another-key' });
    const env = await withKey(provider.url);
    const result = await runWard(['doctor', '--provider', '--json'], env);
    expect(result.code).toBe(1);
    const check = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { check: string; status: string; detail: string; data: { status: number } }).find((line) => line.check === 'model provider (default)');
    expect(check).toMatchObject({ status: 'error', data: { status: 401 } });
    expect(check!.detail).toContain('answered HTTP 401: invalid x-api-key. Check the model key.');
    expectNoCanary([result.stdout, result.stderr], [API_KEY]);
  });

  it('test_an_unreachable_provider_exits_7_naming_the_address_and_why', async () => {
    const env = await withKey('http://127.0.0.1:9');
    const result = await runWard(['doctor', '--provider'], env);
    expect(result.code).toBe(7);
    expect(result.stdout).toMatch(/^FAIL +model provider \(default\) +Could not reach 127\.0\.0\.1:9: the connection failed \([^)]+\)\.$/m);
    expectNoCanary([result.stdout, result.stderr], [API_KEY]);
  });

  it('test_without_a_stored_key_it_exits_5_naming_the_command_that_stores_one_and_sends_nothing', async () => {
    provider = await startModelProvider();
    const env = wardEnv(tempDir(), { WARD_MODEL_BASE_URL: provider.url });
    expect((await runWard(['namespace', 'create', 'work'], env)).code).toBe(0);
    const result = await runWard(['--namespace', 'work', 'doctor', '--provider'], env);
    expect(result.code).toBe(5);
    expect(result.stdout).toMatch(/^FAIL +model provider \(work\) +no model credential for namespace work: store one with "ward --namespace work provider set-key"/m);
    expect(provider.requests).toEqual([]);
  });
});

describe('ward doctor, plain', () => {
  it('test_names_where_the_model_is_and_whether_a_key_is_stored_or_comes_from_the_environment_without_calling_the_provider', async () => {
    provider = await startModelProvider([], { apiKey: API_KEY });
    const endpoint = `${provider.url}, model ${MODEL} (WARD_MODEL_BASE_URL and WARD_MODEL choose them, or the namespace's model profile)`;
    const modelLine = (stdout: string) => stdout.split('\n').find((line) => /^\S+ +model {2,}/.test(line)) ?? '';
    const bare = wardEnv(tempDir(), { WARD_MODEL_BASE_URL: provider.url, WARD_MODEL: MODEL });
    const none = await runWard(['doctor'], bare);
    expect(modelLine(none.stdout)).toBe(`warn           model                  ${endpoint}; no key for namespace default: store one with "ward --namespace default provider set-key"`);
    const fromEnv = await runWard(['doctor'], { ...bare, ANTHROPIC_API_KEY: API_KEY });
    expect(modelLine(fromEnv.stdout)).toBe(`ok             model                  ${endpoint}; no key is stored for namespace default, so runs use ANTHROPIC_API_KEY from the environment`);
    const stored = await runWard(['doctor'], await withKey(provider.url));
    expect(modelLine(stored.stdout)).toBe(`ok             model                  ${endpoint}; a key is stored for namespace default`);
    // Nothing was asked of the provider, and the key shows nowhere.
    expect(provider.requests).toEqual([]);
    expectNoCanary([none.stdout, fromEnv.stdout, stored.stdout, stored.stderr], [API_KEY]);
  });
});
