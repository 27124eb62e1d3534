import { describe, expect, it } from 'vitest';
import { checkServerUrl, isLoopbackHost } from '../../main/base/url-policy.js';
import { checkBaseUrl } from '../../main/providers/model-profile.js';
import { parseIssuerUrl } from '../../main/auth/issuer-url.js';
import { parseConnectionSpec } from '../../main/connections/config.js';
import { wardErrorOf } from '../support/errors.js';

const reason = (raw: string, allowInsecureHttp = false): string | undefined => {
  const checked = checkServerUrl(raw, { allowInsecureHttp });
  return 'reason' in checked ? checked.reason : undefined;
};

describe('the URL policy (L1)', () => {
  it('test_knows_one_set_of_loopback_names_127_0_0_1_1_and_localhost', () => {
    expect(['127.0.0.1', '::1', '[::1]', 'localhost'].every(isLoopbackHost)).toBe(true);
    expect(['127.0.0.2', '0.0.0.0', 'localhost.example.com', '[::ffff:127.0.0.1]'].some(isLoopbackHost)).toBe(false);
  });

  it('test_takes_https_anywhere_and_plain_http_only_to_a_loopback_name_unless_explicitly_overridden', () => {
    expect(['https://mcp.example.com/mcp', 'http://127.0.0.1:8080/mcp', 'http://[::1]:8080/', 'http://localhost/'].map((url) => reason(url))).toEqual([undefined, undefined, undefined, undefined]);
    expect(reason('http://mcp.example.com/mcp')).toBe('insecure_http');
    expect(reason('http://127.0.0.2:8080/')).toBe('insecure_http');
    expect(reason('http://mcp.example.com/mcp', true)).toBeUndefined();
  });

  it('test_refuses_other_schemes_credentials_in_the_url_override_or_not_and_text_that_is_not_a_url', () => {
    expect(reason('ftp://example.com/')).toBe('scheme');
    expect(reason('https://user:pw@example.com/')).toBe('credentials');
    expect(reason('http://user@mcp.example.com/', true)).toBe('credentials');
    expect(reason('not a url')).toBe('not_a_url');
  });

  it('test_is_the_policy_of_the_model_profile_the_connections_and_the_oidc_issuer_alike', () => {
    for (const check of [
      (url: string) => checkBaseUrl(url, false, 'test'),
      (url: string) => parseConnectionSpec({ transport: 'http', name: 'x', url }),
      (url: string) => parseIssuerUrl(url),
    ]) {
      expect(wardErrorOf(() => check('http://127.0.0.2:8080/')).code).toBe('invalid_config');
      expect(wardErrorOf(() => check('https://user:pw@example.com/')).code).toBe('invalid_config');
      expect(() => check('http://[::1]:8080/')).not.toThrow();
    }
  });
});
