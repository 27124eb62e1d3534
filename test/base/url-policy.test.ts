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
  it('knows one set of loopback names: 127.0.0.1, ::1 and localhost', () => {
    expect(['127.0.0.1', '::1', '[::1]', 'localhost'].every(isLoopbackHost)).toBe(true);
    expect(['127.0.0.2', '0.0.0.0', 'localhost.example.com', '[::ffff:127.0.0.1]'].some(isLoopbackHost)).toBe(false);
  });

  it('takes https anywhere and plain http only to a loopback name, unless explicitly overridden', () => {
    expect(['https://mcp.example.com/mcp', 'http://127.0.0.1:8080/mcp', 'http://[::1]:8080/', 'http://localhost/'].map((url) => reason(url))).toEqual([undefined, undefined, undefined, undefined]);
    expect(reason('http://mcp.example.com/mcp')).toBe('insecure_http');
    expect(reason('http://127.0.0.2:8080/')).toBe('insecure_http');
    expect(reason('http://mcp.example.com/mcp', true)).toBeUndefined();
  });

  it('refuses other schemes, credentials in the URL (override or not) and text that is not a URL', () => {
    expect(reason('ftp://example.com/')).toBe('scheme');
    expect(reason('https://user:pw@example.com/')).toBe('credentials');
    expect(reason('http://user@mcp.example.com/', true)).toBe('credentials');
    expect(reason('not a url')).toBe('not_a_url');
  });

  it('is the policy of the model profile, the connections and the OIDC issuer alike', () => {
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
