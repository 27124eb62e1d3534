import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { storedModelCredential } from '../../main/app/model-credential.js';
import { resolveModelProfile } from '../../main/providers/model-profile.js';
import { namespaceDir, parseNamespace } from '../../main/namespaces/namespace.js';
import { wardErrorOf } from '../support/errors.js';

const ns = parseNamespace('work');

describe('model provider profile (L1)', () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-profile-'));

  it('test_takes_the_default_profile_from_the_environment_https_or_loopback_http', () => {
    expect(resolveModelProfile(home, ns, 'default', {})).toEqual({ name: 'default', baseUrl: 'https://api.anthropic.com', model: 'claude-sonnet-4-5', signIn: null });
    expect(resolveModelProfile(home, ns, 'default', { WARD_MODEL_BASE_URL: 'http://127.0.0.1:8080/', WARD_MODEL: 'claude-opus-4-1' })).toEqual({
      name: 'default',
      baseUrl: 'http://127.0.0.1:8080',
      model: 'claude-opus-4-1',
      signIn: null,
    });
  });

  it('test_refuses_a_non_loopback_http_url_unless_the_override_is_set_explicitly', () => {
    const refused = wardErrorOf(() => resolveModelProfile(home, ns, 'default', { WARD_MODEL_BASE_URL: 'http://models.example.com' }));
    expect(refused.code).toBe('invalid_config');
    expect(refused.message).toBe('WARD_MODEL_BASE_URL: http:// is allowed only for loopback hosts (got models.example.com); use https:// or set the explicit insecure-HTTP override');
    expect(resolveModelProfile(home, ns, 'default', { WARD_MODEL_BASE_URL: 'http://models.example.com', WARD_ALLOW_INSECURE_MODEL_URL: '1' }).baseUrl).toBe('http://models.example.com');
    expect(wardErrorOf(() => resolveModelProfile(home, ns, 'default', { ANTHROPIC_BASE_URL: 'https://user:pw@example.com' })).message).toContain('must not carry credentials');
    expect(wardErrorOf(() => resolveModelProfile(home, ns, 'default', { WARD_MODEL_BASE_URL: 'ftp://example.com' })).message).toContain('must be https://');
  });

  it("test_reads_named_profiles_from_the_namespaces_file_and_fails_closed_on_a_malformed_one", () => {
    const dir = namespaceDir(home, ns);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'model-profiles.json');
    fs.writeFileSync(file, JSON.stringify({ profiles: { fast: { baseUrl: 'https://llm.example.com', model: 'claude-haiku-4-5' } } }));
    expect(resolveModelProfile(home, ns, 'fast', {})).toEqual({ name: 'fast', baseUrl: 'https://llm.example.com', model: 'claude-haiku-4-5', signIn: null });
    expect(wardErrorOf(() => resolveModelProfile(home, ns, 'slow', {})).message).toMatch(/^no model profile "slow" in namespace work/);
    fs.writeFileSync(file, JSON.stringify({ profiles: { fast: { baseUrl: 'https://llm.example.com', model: 'x', extra: true } } }));
    expect(wardErrorOf(() => resolveModelProfile(home, ns, 'fast', {})).code).toBe('invalid_config');
    fs.writeFileSync(file, '{not json');
    expect(wardErrorOf(() => resolveModelProfile(home, ns, 'fast', {})).message).toBe(`${file} is not valid JSON`);
  });

  it('test_takes_the_model_credential_from_the_environment_when_none_is_stored_and_says_how_to_set_one_when_absent', async () => {
    const credential = storedModelCredential(home);
    await expect(credential(ns, { ANTHROPIC_API_KEY: 'k1', CLAUDE_CODE_OAUTH_TOKEN: 't1' })).resolves.toEqual({ kind: 'api-key', value: 'k1' });
    await expect(credential(ns, { CLAUDE_CODE_OAUTH_TOKEN: 't1' })).resolves.toEqual({ kind: 'oauth-token', value: 't1' });
    await expect(credential(ns, {})).rejects.toMatchObject({ code: 'model_key_missing' });
  });
});
