import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseExternalUrl } from '../../main/ipc/handlers.js';
import { isWardError } from '../../main/base/errors.js';
import { CONTENT_SECURITY_POLICY, resolveAppFile, WINDOW_WEB_PREFERENCES } from '../../main/electron/policy.js';
import { APP_ENTRY, senderRefusal } from '../../main/ipc/sender.js';

const ROOT = path.resolve('/opt/ward/dist/renderer');

describe('window settings and CSP (U1)', () => {
  it('test_creates_windows_sandboxed_isolated_without_node_with_web_security', () => {
    expect(WINDOW_WEB_PREFERENCES).toMatchObject({ sandbox: true, contextIsolation: true, nodeIntegration: false, webSecurity: true, webviewTag: false, allowRunningInsecureContent: false });
  });

  it('test_allows_only_our_own_scripts_no_remote_code_no_eval_no_inline_script_nothing_framed_or_fetched', () => {
    const directives = new Map(CONTENT_SECURITY_POLICY.split('; ').map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]));
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('connect-src')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-(eval|inline)|https?:|\*/);
  });
});

describe('IPC sender check (U2)', () => {
  const ours = { windowKnown: true, isTopFrame: true, frameUrl: APP_ENTRY };

  it("test_accepts_our_windows_top_frame_on_the_app_origin", () => {
    expect(senderRefusal(ours)).toBeNull();
  });

  it('test_refuses_a_window_we_did_not_create_a_subframe_another_origin_and_a_frame_without_a_url', () => {
    expect(senderRefusal({ ...ours, windowKnown: false })).toBe('the sender is not a Ward window');
    expect(senderRefusal({ ...ours, isTopFrame: false })).toBe('the sender is not the top frame');
    expect(senderRefusal({ ...ours, frameUrl: 'https://evil.example/index.html' })).toBe("the sender's origin https://evil.example is not app://ward");
    expect(senderRefusal({ ...ours, frameUrl: 'app://ward.evil/index.html' })).toBe("the sender's origin app://ward.evil is not app://ward");
    expect(senderRefusal({ ...ours, frameUrl: 'file:///opt/ward/dist/renderer/index.html' })).toMatch(/^the sender's origin file:\/\/ is not/);
    expect(senderRefusal({ ...ours, frameUrl: '' })).toBe('the sender has no valid URL');
  });
});

describe('the app protocol serves only the renderer folder', () => {
  it('test_maps_app_ward_paths_into_the_renderer_folder', () => {
    expect(resolveAppFile('app://ward/index.html', ROOT)).toBe(path.join(ROOT, 'index.html'));
    expect(resolveAppFile('app://ward/', ROOT)).toBe(path.join(ROOT, 'index.html'));
    expect(resolveAppFile('app://ward/assets/index-abc.js', ROOT)).toBe(path.join(ROOT, 'assets', 'index-abc.js'));
  });

  it('test_never_resolves_outside_the_renderer_folder_however_the_path_is_encoded', () => {
    for (const url of ['app://ward/../../etc/passwd', 'app://ward/%2e%2e/%2e%2e/etc/passwd', 'app://ward/assets%2f..%2f..%2f..%2fsecret', 'app://ward/assets/%2e%2e%2f%2e%2e%2fsecret']) {
      const file = resolveAppFile(url, ROOT);
      expect([url, file === null || file.startsWith(ROOT + path.sep)]).toEqual([url, true]);
    }
    // Encoded separators that climb out are refused outright.
    expect(resolveAppFile('app://ward/assets%2f..%2f..%2f..%2fsecret', ROOT)).toBeNull();
  });

  it('test_refuses_backslashes_nul_other_hosts_and_other_schemes', () => {
    for (const url of ['app://ward/a%5c..%5c..%5csecret', 'app://ward/x%00.js', 'app://other/index.html', 'https://ward/index.html', 'not a url']) {
      expect([url, resolveAppFile(url, ROOT)]).toEqual([url, null]);
    }
  });
});

describe('external links', () => {
  it('test_opens_only_parsed_http_and_https_urls', () => {
    expect(parseExternalUrl('https://example.com/a?b=c').href).toBe('https://example.com/a?b=c');
    expect(parseExternalUrl('http://example.com').protocol).toBe('http:');
    for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd', 'app://ward/index.html', '/relative', 'example.com']) {
      let error: unknown;
      try {
        parseExternalUrl(bad);
      } catch (caught) {
        error = caught;
      }
      expect([bad, isWardError(error, 'usage')]).toEqual([bad, true]);
    }
  });
});
