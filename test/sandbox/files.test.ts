/**
 * S2 as data: the file view a run gets, written as the sandbox runtime's filesystem config. The
 * same builder serves Linux, macOS and Windows; macOS and Windows cannot run here, so their
 * output is checked as data (the test names say so).
 */
import { describe, expect, it } from 'vitest';
import { filesystemView, reachability, sandboxGrants, wardPrivatePaths, type RunFiles } from '../../main/sandbox/files.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';

const home = '/home/alice/.config/Ward';
const files = (more: Partial<RunFiles> = {}): RunFiles => ({
  programs: ['/opt/ward/cli', '/opt/ward/node_modules/@anthropic-ai/sandbox-runtime/vendor'],
  readOnly: ['/tmp/ward-run-1'],
  writable: [`${home}/namespaces/abc/workspaces/c1`, `${home}/namespaces/abc/claude`],
  grants: { read: ['/srv/docs'], write: [], denyRead: ['/srv/docs/secret'], denyWrite: [] },
  hidden: [home, '/run/user', '/run/dbus'],
  ...more,
});

describe('the file view of a run (S2)', () => {
  it('test_linux_hides_the_root_and_shows_back_only_the_system_the_programs_the_run_and_the_grants', () => {
    const view = filesystemView(files(), 'linux');
    expect(view.denyRead).toEqual(['/', home, '/run/user', '/run/dbus', '/srv/docs/secret']);
    expect(view.allowRead).toEqual(expect.arrayContaining(['/usr', '/etc/ssl', '/etc/resolv.conf', '/opt/ward/cli', '/tmp/ward-run-1', `${home}/namespaces/abc/workspaces/c1`, '/srv/docs']));
    // Nothing of the home folder, /run or the rest of /etc is shown back.
    expect(view.allowRead.filter((entry) => entry === '/etc' || entry.startsWith('/home/alice') && !entry.startsWith(`${home}/namespaces/abc/`) || entry.startsWith('/run'))).toEqual([]);
    expect(view.allowWrite).toEqual([`${home}/namespaces/abc/workspaces/c1`, `${home}/namespaces/abc/claude`]);
    // The denied file (the runtime's built-in denies come from the engine, which scans the folders).
    expect(view.denyWrite).toEqual(['/srv/docs/secret']);
  });

  it('test_the_runtimes_built_in_denies_for_the_runs_folders_are_write_denied_in_the_view_and_for_the_approval_tool', () => {
    const workspace = `${home}/namespaces/abc/workspaces/c1`;
    const view = filesystemView(files(), 'linux', [`${workspace}/.bashrc`, `${workspace}/sub/.git/hooks`]);
    expect(view.denyWrite).toEqual(['/srv/docs/secret', `${workspace}/.bashrc`, `${workspace}/sub/.git/hooks`]);
    const reach = reachability(view, 'linux');
    expect(reach(`${workspace}/.bashrc`, true)).toBe(false);
    expect(reach(`${workspace}/sub/.git/hooks/pre-commit`, true)).toBe(false);
    expect(reach(`${workspace}/sub/.git/hooks/pre-commit`, false)).toBe(true);
    expect(reach(`${workspace}/notes.md`, true)).toBe(true);
  });

  it('test_the_child_reaches_what_the_view_shows_and_not_wards_data_or_a_denied_file_inside_a_grant', () => {
    const reach = reachability(filesystemView(files(), 'linux'), 'linux');
    expect(reach(`${home}/namespaces/abc/workspaces/c1/notes.md`, true)).toBe(true);
    expect(reach(`${home}/namespaces/abc/ward.db`, false)).toBe(false);
    expect(reach(`${home}/namespaces/def/claude/projects/x.jsonl`, false)).toBe(false);
    expect(reach('/srv/docs/readme.md', false)).toBe(true);
    expect(reach('/srv/docs/readme.md', true)).toBe(false);
    expect(reach('/srv/docs/secret/key.pem', false)).toBe(false);
    expect(reach('/home/alice/.ssh/id_ed25519', false)).toBe(false);
    expect(reach('/run/user/1000/bus', false)).toBe(false);
    expect(reach('/usr/bin/git', false)).toBe(true);
  });

  it('test_a_grant_of_a_parent_of_wards_data_still_hides_the_data_but_shows_the_runs_own_folders', () => {
    const view = filesystemView(files({ grants: { read: ['/home/alice'], write: [], denyRead: [], denyWrite: [] } }), 'linux');
    const reach = reachability(view, 'linux');
    expect(reach('/home/alice/projects/app.ts', false)).toBe(true);
    expect(reach(`${home}/namespaces/abc/model-profiles.json`, false)).toBe(false);
    expect(reach(`${home}/namespaces/abc/workspaces/c1/notes.md`, false)).toBe(true);
  });

  it('test_wards_private_paths_name_the_data_folder_the_keyring_and_dbus_and_hide_them_under_a_grant_of_the_home_folder', () => {
    const hidden = wardPrivatePaths(home, { HOME: '/home/alice' });
    expect(hidden).toEqual(expect.arrayContaining([home, '/run/user', '/run/dbus', '/home/alice/.local/share/keyrings']));
    // The layer itself, without the check that refuses such a grant when it is given.
    const reach = reachability(filesystemView(files({ hidden, grants: { read: ['/home/alice', '/run'], write: [], denyRead: [], denyWrite: [] } }), 'linux'), 'linux');
    expect(reach('/home/alice/projects/app.ts', false)).toBe(true);
    expect(reach(`${home}/namespaces/abc/ward.db`, false)).toBe(false);
    expect(reach(`${home}/settings.json`, false)).toBe(false);
    expect(reach('/home/alice/.local/share/keyrings/login.keyring', false)).toBe(false);
    expect(reach('/run/user/1000/bus', false)).toBe(false);
  });

  it('test_the_rules_at_spawn_become_the_views_grants', () => {
    expect(sandboxGrants(parsePermissionFlags(['--allow-read=/srv/docs', '--allow-write=/srv/out', '--deny-read=/srv/docs/secret', '--deny-write=/srv/out/keep', '--allow-net=example.com'], '/'))).toEqual({
      read: ['/srv/docs'],
      write: ['/srv/out'],
      denyRead: ['/srv/docs/secret'],
      denyWrite: ['/srv/out/keep'],
    });
  });

  it('test_macos_output_hides_the_root_and_reads_etc_through_private_etc_not_run_here', () => {
    const view = filesystemView(files(), 'darwin');
    expect(view.denyRead[0]).toBe('/');
    expect(view.allowRead).toEqual(expect.arrayContaining(['/usr', '/System', '/private/etc/ssl', '/private/etc/resolv.conf', '/opt/ward/cli']));
    expect(view.allowRead).not.toContain('/etc/ssl');
  });

  it('test_windows_output_uses_windows_paths_and_no_root_deny_the_sandbox_user_sees_nothing_of_ours_by_itself_not_run_here', () => {
    const data = 'C:\\Users\\alice\\AppData\\Roaming\\Ward';
    const view = filesystemView(
      {
        programs: ['C:\\Program Files\\Ward\\resources\\cli'],
        readOnly: ['C:\\Users\\alice\\AppData\\Local\\Temp\\ward-run-1'],
        writable: [`${data}\\namespaces\\abc\\workspaces\\c1`],
        grants: { read: ['D:\\docs'], write: [], denyRead: [], denyWrite: [] },
        hidden: [data],
      },
      'win32',
    );
    expect(view.denyRead).toEqual([data]);
    expect(view.allowRead).toEqual(['C:\\Program Files\\Ward\\resources\\cli', 'C:\\Users\\alice\\AppData\\Local\\Temp\\ward-run-1', `${data}\\namespaces\\abc\\workspaces\\c1`, 'D:\\docs']);
    const reach = reachability(view, 'win32');
    expect(reach(`${data}\\namespaces\\abc\\ward.db`, false)).toBe(false);
    expect(reach(`${data}\\namespaces\\abc\\workspaces\\c1\\a.txt`, true)).toBe(true);
  });
});
