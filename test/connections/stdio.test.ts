import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PinnedToolRoute } from '../../main/upstreams/types.js';
import { STDIO_SERVER, databaseBytes, harness, pids, signal, stdioSpec } from './support.js';
import { until } from '../support/wait.js';
import { alive } from '../support/processes.js';

function route(routes: PinnedToolRoute[], exposed: string): PinnedToolRoute {
  const found = routes.find((r) => r.exposedName === exposed);
  if (found === undefined) throw new Error(`no route ${exposed} in ${routes.map((r) => r.exposedName).join(', ')}`);
  return found;
}

describe('stdio connections', () => {
  it('test_discovers_pins_with_schema_hashes_and_calls_a_tool_through_the_broker_caller', async () => {
    const h = harness();
    await h.manager.add(stdioSpec('files'));
    const { pins } = await h.manager.discover('files');
    expect(pins.map((p) => p.name)).toEqual(['big', 'echo', 'env', 'exit', 'garbage', 'getenv', 'hang', 'helper']);
    expect(pins.every((p) => /^[0-9a-f]{64}$/.test(p.schemaHash) && p.status === 'pinned' && p.enabled)).toBe(true);
    const echo = route(h.manager.routes(), 'files__echo');
    expect(echo).toMatchObject({ upstream: 'files', upstreamName: 'echo' });
    expect(await h.manager.caller.callTool(echo, { text: 'hello' }, signal())).toEqual({ ok: true, isError: false, content: [{ type: 'text', text: 'hello' }], bytes: 5 });
    expect(h.manager.get('files')).toMatchObject({ health: 'ok', lastErrorCode: null });
  });

  it('test_gives_the_server_only_allowlisted_variables_plus_its_named_secrets_read_from_the_keychain_at_spawn', async () => {
    const h = harness();
    const canary = `secret-env-canary-${Date.now()}`;
    await h.manager.add({ ...stdioSpec('keyed'), secretEnv: ['API_TOKEN'] }, { API_TOKEN: canary });
    await h.manager.discover('keyed');
    const connection = await h.manager.connection('keyed');
    const environ = fs.readFileSync(`/proc/${connection.pid}/environ`, 'utf8').split('\0').filter(Boolean);
    const names = environ.map((line) => line.slice(0, line.indexOf('=')));
    expect(names.every((name) => ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ', 'API_TOKEN'].includes(name))).toBe(true);
    expect(environ).toContain(`API_TOKEN=${canary}`);
    // The value lives in the keychain only: the registry names the variable, never its value.
    expect(h.manager.get('keyed').spec).toMatchObject({ secretEnv: ['API_TOKEN'] });
    expect(databaseBytes(h).includes(canary)).toBe(false);
  });

  it('test_refuses_to_add_a_connection_whose_named_secret_has_no_value_and_adds_nothing', async () => {
    const h = harness();
    await expect(h.manager.add({ ...stdioSpec('keyed'), secretEnv: ['API_TOKEN'] })).rejects.toThrow(/no value given for API_TOKEN/);
    expect(h.manager.list()).toEqual([]);
  });

  it('test_reports_a_command_that_does_not_exist_as_unreachable', async () => {
    const h = harness();
    await h.manager.add({ transport: 'stdio', name: 'ghost', command: '/nonexistent/mcp-server', args: [] });
    await expect(h.manager.discover('ghost')).rejects.toMatchObject({ code: 'unreachable' });
    expect(h.manager.get('ghost')).toMatchObject({ health: 'error', lastErrorCode: 'unreachable' });
  });

  it('test_a_crashed_server_stays_down_closed_then_unreachable_until_an_explicit_restart_which_backs_off', async () => {
    let now = 1_000_000;
    const h = harness({ now: () => now });
    const pidFile = path.join(h.dir, 'pids');
    await h.manager.add(stdioSpec('crashy', '--pid-file', pidFile));
    await h.manager.discover('crashy');
    const routes = h.manager.routes();
    const first = pids(pidFile)[0]!;
    expect(await h.manager.caller.callTool(route(routes, 'crashy__exit'), {}, signal())).toMatchObject({ ok: false, errorCode: 'closed' });
    await until(() => !alive(first), 'the crashed server is gone');
    expect(await h.manager.caller.callTool(route(routes, 'crashy__echo'), { text: 'x' }, signal())).toMatchObject({ ok: false, errorCode: 'unreachable' });
    expect(pids(pidFile)).toHaveLength(1); // never restarted by a call
    expect(h.manager.get('crashy').crashed).toMatchObject({ code: 'closed' });

    now += 1_000;
    await h.manager.restart('crashy');
    expect(pids(pidFile)).toHaveLength(2);
    expect(await h.manager.caller.callTool(route(routes, 'crashy__echo'), { text: 'back' }, signal())).toMatchObject({ ok: true });

    // A second crash in a row doubles the wait: an immediate restart is refused, saying when.
    expect(await h.manager.caller.callTool(route(routes, 'crashy__exit'), {}, signal())).toMatchObject({ ok: false, errorCode: 'closed' });
    await until(() => h.manager.get('crashy').crashed !== null, 'the crash is recorded');
    await expect(h.manager.restart('crashy')).rejects.toThrow(/stopped 2 time\(s\) in a row; restart it again in 2 s/);
    expect(pids(pidFile)).toHaveLength(2);
    now += 2_000;
    await h.manager.restart('crashy');
    expect(pids(pidFile)).toHaveLength(3);
  });

  it('test_garbage_on_stdout_ends_the_session_as_a_protocol_error_and_stops_the_server', async () => {
    const h = harness();
    const pidFile = path.join(h.dir, 'pids');
    await h.manager.add(stdioSpec('noisy', '--pid-file', pidFile));
    await h.manager.discover('noisy');
    const outcome = await h.manager.caller.callTool(route(h.manager.routes(), 'noisy__garbage'), {}, signal());
    expect(outcome).toMatchObject({ ok: false, errorCode: 'protocol_error' });
    await until(() => !alive(pids(pidFile)[0]!), 'the server is stopped');
    expect(h.manager.get('noisy')).toMatchObject({ health: 'error', lastErrorCode: 'protocol_error' });
  });

  it('test_a_server_that_prints_garbage_before_speaking_mcp_fails_discovery_as_a_protocol_error', async () => {
    const h = harness();
    await h.manager.add(stdioSpec('chatty', '--garbage-first'));
    await expect(h.manager.discover('chatty')).rejects.toMatchObject({ code: 'protocol_error' });
  });

  it('test_a_huge_tool_list_is_refused_as_too_large', async () => {
    const h = harness();
    await h.manager.add(stdioSpec('many', '--tool-count', '600'));
    await expect(h.manager.discover('many')).rejects.toMatchObject({ code: 'too_large', message: expect.stringMatching(/more than 512 tools/) });
    expect(h.manager.get('many').tools).toEqual([]);
  });

  it('test_a_result_over_1_mib_is_discarded_as_too_large_and_the_session_stays_usable', async () => {
    const h = harness();
    await h.manager.add(stdioSpec('bulky'));
    await h.manager.discover('bulky');
    const routes = h.manager.routes();
    expect(await h.manager.caller.callTool(route(routes, 'bulky__big'), { bytes: 1024 * 1024 + 1 }, signal())).toMatchObject({ ok: false, errorCode: 'too_large' });
    expect(await h.manager.caller.callTool(route(routes, 'bulky__echo'), { text: 'still here' }, signal())).toMatchObject({ ok: true });
  });

  it('test_a_result_over_the_8_mib_message_cap_is_refused_by_name_and_the_next_call_on_the_same_server_works', async () => {
    const h = harness();
    const pidFile = path.join(h.dir, 'pids');
    await h.manager.add(stdioSpec('flood', '--pid-file', pidFile));
    await h.manager.discover('flood');
    const routes = h.manager.routes();
    const refused = await h.manager.caller.callTool(route(routes, 'flood__big'), { bytes: 8 * 1024 * 1024 + 1 }, signal());
    expect(refused).toMatchObject({ ok: false, errorCode: 'message_too_large' });
    expect(refused.ok ? '' : refused.message).toContain('larger than 8 MiB');
    expect(refused.ok ? '' : refused.message).toContain('8388608 bytes');
    // The same server process answers the next call: the oversized line was skipped, not the connection.
    expect(await h.manager.caller.callTool(route(routes, 'flood__echo'), { text: 'still here' }, signal())).toMatchObject({ ok: true, content: [{ type: 'text', text: 'still here' }] });
    expect(pids(pidFile)).toHaveLength(1);
    expect(h.manager.get('flood')).toMatchObject({ health: 'ok' });
  });

  it('test_a_hanging_call_times_out_and_an_aborted_one_is_cancelled_neither_is_retried', async () => {
    const h = harness({ limits: { callTimeoutMs: 300 } });
    await h.manager.add(stdioSpec('stuck'));
    await h.manager.discover('stuck');
    const hang = route(h.manager.routes(), 'stuck__hang');
    expect(await h.manager.caller.callTool(hang, {}, signal())).toMatchObject({ ok: false, errorCode: 'timed_out' });
    const controller = new AbortController();
    const pending = h.manager.caller.callTool(hang, {}, controller.signal);
    controller.abort(new DOMException('stop', 'AbortError'));
    expect(await pending).toMatchObject({ ok: false, errorCode: 'cancelled' });
  });

  it('test_a_server_that_never_answers_initialize_times_out_and_is_stopped', async () => {
    const h = harness({ limits: { connectTimeoutMs: 500 } });
    const pidFile = path.join(h.dir, 'pids');
    await h.manager.add(stdioSpec('mute', '--hang-init', '--pid-file', pidFile));
    await expect(h.manager.discover('mute')).rejects.toMatchObject({ code: 'timed_out' });
    await until(() => !alive(pids(pidFile)[0]!), 'the server is stopped');
  });

  it('test_a_changed_schema_disables_the_tool_with_a_reason_until_it_is_re_pinned_b3', async () => {
    const h = harness();
    const toolsFile = path.join(h.dir, 'tools.json');
    const v1 = [{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }];
    fs.writeFileSync(toolsFile, JSON.stringify(v1));
    await h.manager.add(stdioSpec('shifty', '--tools-file', toolsFile));
    await h.manager.discover('shifty');
    const pinned = route(h.manager.routes(), 'shifty__echo');

    const v2 = [{ ...v1[0], inputSchema: { type: 'object', properties: { text: { type: 'string' }, loud: { type: 'boolean' } } } }];
    fs.writeFileSync(toolsFile, JSON.stringify(v2));
    const { pins } = await h.manager.discover('shifty');
    expect(pins[0]).toMatchObject({ name: 'echo', status: 'schema_changed', reason: expect.stringMatching(/^its input schema changed upstream since it was pinned; re-pin it with "ward --namespace t-[0-9a-f]{12} connections tools shifty --repin echo"$/) });
    expect(h.manager.routes()).toEqual([]);
    expect(await h.manager.caller.callTool(pinned, { text: 'x' }, signal())).toMatchObject({ ok: false, errorCode: 'schema_changed' });

    // The name `ward connections tools` lists it under works as well as its own.
    const repinned = await h.manager.repin('shifty', 'shifty__echo');
    expect(repinned).toMatchObject({ status: 'pinned', reason: null });
    expect(repinned.schemaHash).not.toBe(pinned.schemaHash);
    // An agent version pinned to the old schema stays refused; the new pin works.
    expect(await h.manager.caller.callTool(pinned, { text: 'x' }, signal())).toMatchObject({ ok: false, errorCode: 'schema_changed' });
    expect(await h.manager.caller.callTool(route(h.manager.routes(), 'shifty__echo'), { text: 'x' }, signal())).toMatchObject({ ok: true });
  });

  it('test_a_schema_that_changes_between_discovery_and_a_call_is_caught_at_call_time', async () => {
    const h = harness();
    const toolsFile = path.join(h.dir, 'tools.json');
    const tool = (properties: object) => [{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties } }];
    fs.writeFileSync(toolsFile, JSON.stringify(tool({ text: { type: 'string' } })));
    await h.manager.add(stdioSpec('late', '--tools-file', toolsFile));
    await h.manager.discover('late');
    const pinned = route(h.manager.routes(), 'late__echo');
    await h.manager.disconnect('late');
    fs.writeFileSync(toolsFile, JSON.stringify(tool({ text: { type: 'number' } })));
    expect(await h.manager.caller.callTool(pinned, { text: 'x' }, signal())).toMatchObject({ ok: false, errorCode: 'schema_changed' });
    expect(h.manager.get('late').tools[0]).toMatchObject({ status: 'schema_changed' });
  });

  it('test_a_tool_named_like_another_connection_stays_under_its_own_connection_and_reaches_only_its_own_server', async () => {
    const h = harness();
    await h.manager.add(stdioSpec('alpha'));
    await h.manager.add(stdioSpec('beta', '--extra-tool', 'alpha__echo'));
    await h.manager.discover('alpha');
    await h.manager.discover('beta');
    const names = h.manager.routes().map((r) => r.exposedName);
    expect(new Set(names).size).toBe(names.length);
    const impostor = route(h.manager.routes(), 'beta__alpha__echo');
    expect(impostor).toMatchObject({ upstream: 'beta', upstreamName: 'alpha__echo' });
    // Served by beta (its fixture answers unknown names with a tool error), never by alpha.
    expect(await h.manager.caller.callTool(impostor, {}, signal())).toMatchObject({ ok: true, isError: true, content: [{ type: 'text', text: 'no tool alpha__echo' }] });
    // A route that claims one connection's name but another's upstream is refused.
    expect(await h.manager.caller.callTool({ ...impostor, upstream: 'alpha', upstreamName: 'echo' }, { text: 'x' }, signal())).toMatchObject({ ok: false, errorCode: 'refused' });
  });

  it('test_a_tool_turned_off_is_refused_and_not_offered_turned_on_again_it_works', async () => {
    const h = harness();
    await h.manager.add(stdioSpec('toggle'));
    await h.manager.discover('toggle');
    const echo = route(h.manager.routes(), 'toggle__echo');
    h.manager.setToolEnabled('toggle', 'echo', false);
    expect(h.manager.routes().map((r) => r.exposedName)).not.toContain('toggle__echo');
    expect(await h.manager.caller.callTool(echo, { text: 'x' }, signal())).toMatchObject({ ok: false, errorCode: 'refused' });
    h.manager.setToolEnabled('toggle', 'echo', true);
    expect(await h.manager.caller.callTool(echo, { text: 'x' }, signal())).toMatchObject({ ok: true });
    expect(() => h.manager.setToolEnabled('toggle', 'nope', true)).toThrow(/has no tool named "nope"/);
  });

  it('test_closing_the_connection_stops_the_server_and_the_helpers_it_started', async () => {
    const h = harness();
    await h.manager.add(stdioSpec('parent'));
    await h.manager.discover('parent');
    const server = (await h.manager.connection('parent')).pid!;
    const outcome = await h.manager.caller.callTool(route(h.manager.routes(), 'parent__helper'), {}, signal());
    const helper = Number((outcome as unknown as { content: Array<{ text: string }> }).content[0]!.text);
    expect(alive(server) && alive(helper)).toBe(true);
    await h.manager.disconnect('parent');
    await until(() => !alive(server) && !alive(helper), 'server and helper are gone');
  });

  it('test_removing_a_connection_stops_its_server_and_deletes_its_secrets', async () => {
    const h = harness();
    await h.manager.add({ ...stdioSpec('gone'), secretEnv: ['API_TOKEN'] }, { API_TOKEN: 'v' });
    await h.manager.discover('gone');
    const server = (await h.manager.connection('gone')).pid!;
    expect(await h.manager.remove('gone')).toBe(true);
    await until(() => !alive(server), 'the server is gone');
    expect(h.manager.list()).toEqual([]);
    await h.manager.add({ ...stdioSpec('gone'), secretEnv: [] });
    expect(h.manager.get('gone').tools).toEqual([]);
  });
});

describe('stdio servers are Ward\'s children', () => {
  it('test_a_server_that_ignores_sigterm_and_stdin_eof_is_gone_once_the_ward_process_exits', async () => {
    const h = harness();
    const result = spawnSync(process.execPath, ['--import', 'tsx', path.resolve('test/connections/exit-child.ts'), path.join(h.dir, 'home'), h.ns.name, STDIO_SERVER], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS },
    });
    expect(result.status, result.stderr).toBe(0);
    const pid = Number(result.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    await until(() => !alive(pid), 'the stubborn server died with Ward');
  });
});

describe('connections and namespaces', () => {
  it('test_keeps_same_named_connections_of_two_namespaces_apart_own_registry_own_secret_own_removal_n1', async () => {
    const a = harness();
    const b = harness();
    await a.manager.add({ ...stdioSpec('files'), secretEnv: ['API_TOKEN'] }, { API_TOKEN: 'value-for-a' });
    await b.manager.add({ ...stdioSpec('files'), secretEnv: ['API_TOKEN'] }, { API_TOKEN: 'value-for-b' });
    const environ = async (h: typeof a): Promise<string> => {
      await h.manager.discover('files');
      return fs.readFileSync(`/proc/${(await h.manager.connection('files')).pid}/environ`, 'utf8');
    };
    expect(await environ(a)).toContain('API_TOKEN=value-for-a\0');
    expect(await environ(b)).toContain('API_TOKEN=value-for-b\0');
    await a.manager.remove('files');
    expect(a.manager.list()).toEqual([]);
    await b.manager.disconnect('files');
    expect(await environ(b)).toContain('API_TOKEN=value-for-b\0');
  });

  it('test_resolves_the_tools_picked_for_an_agent_refusing_unknown_turned_off_and_changed_ones_by_name', async () => {
    const h = harness();
    await h.manager.add(stdioSpec('files'));
    await h.manager.discover('files');
    expect(h.manager.resolveTools(['files__echo', 'files__big']).map((route) => route.upstreamName)).toEqual(['echo', 'big']);
    h.manager.setToolEnabled('files', 'big', false);
    expect(() => h.manager.resolveTools(['files__big'])).toThrow(/"files__big" is turned off; turn it on with "ward --namespace t-[0-9a-f]{12} connections tools files --enable big"/);
    expect(() => h.manager.resolveTools(['files__nope'])).toThrow(/no tool "files__nope"/);
    expect(() => h.manager.resolveTools(['echo'])).toThrow(/no tool "echo"/);
  });
});
