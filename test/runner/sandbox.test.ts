/**
 * The OS sandbox (R3 defence in depth) with the real pinned CLI and the scripted provider: a
 * command the permission engine grants still cannot write or read outside what the sandbox binds.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../main/cli/main.js';
import { isWardError } from '../../main/base/errors.js';
import type { AuditRecord } from '../../main/permissions/audit.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import type { PromptAnswer, Prompter } from '../../main/permissions/prompter.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { verifyPinnedCli } from '../../main/runner/pin.js';
import { findInnerProcess, sandboxArgs, sandboxState } from '../../main/runner/sandbox.js';
import type { RunState } from '../../main/store/runs.js';
import { toolResultsSeen, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { tempDir } from '../support/temp.js';
import { CANARY_KEY, payloads, startHarness, until, type Harness } from '../app/runs/harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function bash(command: string): ScriptStep {
  return { blocks: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'run it' } }] };
}
const DONE: ScriptStep = { blocks: [{ type: 'text', text: 'done' }] };

function decisions(h: Harness, conversationId: string): string[] {
  return payloads<AuditRecord>(h.events(conversationId), 'permission_decision').map((decision) => `${decision.value} ${decision.decision}`);
}

function alive(pid: number): boolean {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Every live process's command line, NUL-separated parts joined by newlines. */
function allCommandLines(): string {
  const lines: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      lines.push(fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join('\n'));
    } catch {
      // gone meanwhile
    }
  }
  return lines.join('\n');
}

const sandboxed = sandboxState(process.env);

describe('the OS sandbox around the CLI (bubblewrap)', () => {
  it('test_bwrap_works_on_this_machine_so_runs_are_sandboxed_by_default', () => {
    // The rest of this file is meaningless without it: CI installs bubblewrap.
    expect(sandboxed).toMatchObject({ mode: 'auto', bwrap: expect.stringMatching(/bwrap$/) });
  });

  it('test_a_granted_touch_writes_inside_the_workspace_and_the_sandbox_stops_it_outside', async () => {
    const root = fs.realpathSync(tempDir('ward-sandbox-'));
    const workspace = path.join(root, 'workspace');
    const outside = path.join(root, 'not-granted');
    fs.mkdirSync(workspace);
    fs.mkdirSync(outside);
    const inside = path.join(workspace, 'inside.txt');
    const escaped = path.join(outside, 'escaped.txt');
    harness = await startHarness([bash(`touch ${inside}`), bash(`touch ${escaped}`), DONE]);
    const permissions = parsePermissionFlags(['--allow-run=touch', `--allow-write=${workspace}`], root);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'touch', permissions, workspace });
    expect((await handle.done).state).toBe('succeeded');

    // The permission engine allowed both by the run grant; only the sandbox stood in the way.
    expect(decisions(harness, handle.conversationId)).toEqual(['touch allow', 'touch allow']);
    expect(fs.existsSync(inside)).toBe(true);
    expect(fs.existsSync(escaped)).toBe(false);
    const seen = toolResultsSeen(harness.provider);
    expect(seen[1]!.isError).toBe(true);
    expect(seen[1]!.text).toMatch(/No such file or directory|Read-only file system|Permission denied/);
  });

  it('test_without_the_sandbox_the_same_granted_touch_does_escape', async () => {
    // The control for the test above: WARD_SANDBOX=off, and the write outside lands.
    const root = fs.realpathSync(tempDir('ward-sandbox-'));
    const workspace = path.join(root, 'workspace');
    fs.mkdirSync(workspace);
    const escaped = path.join(root, 'escaped.txt');
    harness = await startHarness([bash(`touch ${escaped}`), DONE], { env: { WARD_SANDBOX: 'off' } });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'touch', permissions: parsePermissionFlags(['--allow-run=touch'], root), workspace });
    expect((await handle.done).state).toBe('succeeded');
    expect(fs.existsSync(escaped)).toBe(true);
    expect(payloads(harness.events(handle.conversationId), 'run_started')[0]).toMatchObject({ sandboxed: false });
  });

  it('test_a_granted_cat_cannot_read_a_home_canary_or_another_namespaces_database', async () => {
    harness = await startHarness([]);
    const homeCanary = path.join(harness.home, 'home-canary-4c1d.txt');
    fs.writeFileSync(homeCanary, 'home-canary-value-8e2a');
    const other = harness.core.store(parseNamespace('other'));
    const otherDb = other.file;
    const workspace = path.join(fs.realpathSync(tempDir('ward-sandbox-')), 'workspace');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, 'mine.txt'), 'workspace-text-1b9f');
    harness.provider.push(bash(`cat ${path.join(workspace, 'mine.txt')}`), bash(`cat ${homeCanary}`), bash(`cat ${otherDb}`), DONE);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'cat', permissions: parsePermissionFlags(['--allow-run=cat'], workspace), workspace });
    expect((await handle.done).state).toBe('succeeded');

    expect(decisions(harness, handle.conversationId)).toEqual(['cat allow', 'cat allow', 'cat allow']);
    const seen = toolResultsSeen(harness.provider);
    expect(seen[0]!.text).toContain('workspace-text-1b9f');
    for (const denied of seen.slice(1, 3)) {
      expect(denied.isError).toBe(true);
      expect(denied.text).toContain('No such file or directory');
    }
    const everything = JSON.stringify(harness.provider.requests.map((request) => request.rawBody));
    expect(everything).not.toContain('home-canary-value-8e2a');
    expect(everything).not.toContain('SQLite format 3');
  });

  it('test_an_approval_at_a_prompt_cannot_widen_a_running_sandbox_but_a_conversation_grant_reaches_the_next_turn', async () => {
    const root = fs.realpathSync(tempDir('ward-sandbox-'));
    const workspace = path.join(root, 'workspace');
    const outside = path.join(root, 'outside');
    fs.mkdirSync(workspace);
    fs.mkdirSync(outside);
    const secret = path.join(outside, 'secret.txt');
    fs.writeFileSync(secret, 'outside-canary-a7c3');
    const read: ScriptStep = { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: secret } }] };
    const answers: PromptAnswer[] = ['conversation'];
    const prompter: Prompter = { interactive: true, ask: () => Promise.resolve(answers.shift() ?? 'deny') };
    harness = await startHarness([read, DONE], { prompter });
    const permissions = parsePermissionFlags([`--allow-read=${workspace}`], root);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'read', permissions, workspace });
    expect((await first.done).state).toBe('succeeded');
    // Allowed by the person, yet the file is not in this run's sandbox: the model never sees it,
    // and is told why instead of a puzzling "file does not exist".
    expect(decisions(harness, first.conversationId)).toEqual([`${secret} allow`]);
    expect(payloads(harness.events(first.conversationId), 'run_started')[0]).toMatchObject({ sandboxed: true });
    expect(toolResultsSeen(harness.provider)[0]).toMatchObject({ isError: true, text: expect.stringContaining(`on ${secret}, but it is outside this turn's sandbox`) });
    expect(JSON.stringify(harness.provider.requests.map((request) => request.rawBody))).not.toContain('outside-canary-a7c3');

    // The grant "for this conversation" is a rule at the next spawn, so the next turn's sandbox shows the file.
    harness.provider.push(read, DONE);
    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'again', permissions });
    expect((await second.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider).at(-1)!.text).toContain('outside-canary-a7c3');
  });

  it('test_stop_interrupts_the_sandboxed_cli_and_leaves_neither_bwrap_nor_the_cli_running', async () => {
    harness = await startHarness([{ kind: 'hang' }], { stopGraceMs: 60_000 });
    const store = harness.core.store(harness.ns);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'wait' });
    await until(() => harness!.provider.conversationRequests().length === 1, 'the model call');
    const bwrapPid = handle.childPid()!;
    const pinned = await verifyPinnedCli();
    const cliPid = findInnerProcess(bwrapPid, pinned.path);
    expect(cliPid).not.toBeNull();
    // R1: the process inside the sandbox runs the verified file (same device and inode), in its own mount namespace.
    const exe = fs.statSync(`/proc/${cliPid}/exe`);
    const file = fs.statSync(pinned.path);
    expect([exe.dev, exe.ino]).toEqual([file.dev, file.ino]);
    expect(fs.readlinkSync(`/proc/${cliPid}/ns/mnt`)).not.toBe(fs.readlinkSync('/proc/self/ns/mnt'));
    expect(fs.readFileSync(`/proc/${bwrapPid}/cmdline`, 'utf8').split('\0')[0]).toMatch(/bwrap$/);
    // No process's argv carries the model key or the capability: bwrap's argv names paths only.
    const [runDir] = fs.readdirSync(harness.tmpRoot).map((name) => path.join(harness!.tmpRoot, name));
    const capability = (JSON.parse(fs.readFileSync(path.join(runDir!, 'mcp.json'), 'utf8')) as { mcpServers: { ward: { headers: { Authorization: string } } } }).mcpServers.ward.headers.Authorization.replace('Bearer ', '');
    const commandLines = allCommandLines();
    expect(commandLines).toContain(runDir!);
    expect(commandLines).not.toContain(CANARY_KEY);
    expect(commandLines).not.toContain(capability);

    const states: RunState[] = [store.runs.get(handle.runId).state];
    const stopping = harness.service.stop(handle.runId);
    states.push(store.runs.get(handle.runId).state);
    const outcome = await stopping;
    states.push(store.runs.get(handle.runId).state);
    expect(states).toEqual(['running', 'stopping', 'stopped']);
    expect(outcome).toMatchObject({ state: 'stopped', reason: 'stopped by the user' });
    // The grace period is a minute, so the CLI ended on the SIGINT itself: it printed its result (usage).
    expect(payloads(harness.events(handle.conversationId), 'usage')).toHaveLength(1);
    expect(alive(bwrapPid)).toBe(false);
    expect(alive(cliPid!)).toBe(false);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
  });

  it('test_require_without_a_working_bwrap_refuses_the_run_and_spawns_nothing', async () => {
    harness = await startHarness([DONE], { env: { WARD_SANDBOX: 'require', PATH: '/nonexistent-ward-bin' } });
    let refused: unknown;
    try {
      harness.service.startTurn({ namespace: harness.ns, prompt: 'hello' });
    } catch (error) {
      refused = error;
    }
    expect(isWardError(refused, 'sandbox_unavailable')).toBe(true);
    expect((refused as Error).message).toBe('WARD_SANDBOX=require and bwrap (Debian package bubblewrap) is not on PATH; the run was not started');
    const store = harness.core.store(harness.ns);
    expect(store.db.prepare('SELECT count(*) AS n FROM runs').get()).toEqual({ n: 0 });
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
    expect(harness.provider.requests).toEqual([]);
  });

  it('test_require_with_a_bwrap_that_does_not_work_refuses_with_the_reason', async () => {
    harness = await startHarness([DONE], { sandbox: { mode: 'require', bwrap: '/bin/false' } });
    expect(() => harness!.service.startTurn({ namespace: harness!.ns, prompt: 'hello' })).toThrow('WARD_SANDBOX=require and /bin/false does not work here (exit 1)');
    expect(harness.provider.requests).toEqual([]);
  });

  it('test_the_profile_shows_no_home_run_or_ward_data_and_mounts_parents_before_children', () => {
    const home = '/home/alice';
    const ns = `${home}/.local/share/ward/namespaces/abc`;
    const args = sandboxArgs({ binary: '/opt/ward/cli/claude', writable: [`${ns}/workspaces/c1`, `${ns}/claude`], readOnly: ['/tmp/ward-run-x'], cwd: `${ns}/workspaces/c1`, home, grants: { read: ['/srv/docs'], write: [], denyWrite: [] } });
    const mounted = (flag: string) => args.flatMap((arg, index) => (arg === flag ? [args[index + (flag === '--tmpfs' ? 1 : 2)]!] : []));
    expect(mounted('--tmpfs')).toEqual(['/tmp', home]);
    expect(mounted('--bind')).toEqual([`${ns}/claude`, `${ns}/workspaces/c1`]);
    expect(mounted('--ro-bind')).toEqual(expect.arrayContaining(['/usr', '/opt/ward/cli', '/tmp/ward-run-x']));
    expect(mounted('--ro-bind-try')).toContain('/srv/docs');
    // Nothing of /run (D-Bus, keyring), the home folder or the namespace's database folder is bound.
    expect(args.filter((arg) => arg === '/run' || arg.startsWith('/run/') || arg === ns || arg === `${home}/.local`)).toEqual([]);
    // The home tmpfs comes before the binds inside it, /tmp before the run folder.
    expect(args.indexOf(home)).toBeLessThan(args.indexOf(`${ns}/claude`));
    expect(args.indexOf('/tmp')).toBeLessThan(args.indexOf('/tmp/ward-run-x'));
    expect(args).toEqual(expect.arrayContaining(['--unshare-pid', '--die-with-parent', '--new-session', '--cap-drop', 'ALL']));
    expect(args).not.toContain('--unshare-net');
    expect(args.slice(-2)).toEqual(['--chdir', `${ns}/workspaces/c1`]);
  });

  it('test_an_unknown_ward_sandbox_value_is_refused_with_the_choices', async () => {
    harness = await startHarness([DONE], { env: { WARD_SANDBOX: 'maybe' } });
    expect(() => harness!.service.startTurn({ namespace: harness!.ns, prompt: 'hello' })).toThrow('WARD_SANDBOX must be off, require or auto (got "maybe")');
  });

  it('test_ward_doctor_says_whether_runs_are_sandboxed', async () => {
    const doctor = async (env: NodeJS.ProcessEnv) => {
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const code = await main(['doctor', '--json'], { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: { WARD_HOME: tempDir(), ...env } });
      const check = out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { check: string; status: string; detail: string })
        .find((entry) => entry.check === 'sandbox');
      return { code, check };
    };
    expect((await doctor({ PATH: process.env.PATH })).check).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^runs are sandboxed with \/.*bwrap \(/) });
    expect((await doctor({ PATH: process.env.PATH, WARD_SANDBOX: 'off' })).check).toEqual({ check: 'sandbox', status: 'warning', detail: 'runs are NOT sandboxed: WARD_SANDBOX=off', data: expect.anything() });
    const required = await doctor({ PATH: '/nonexistent-ward-bin', WARD_SANDBOX: 'require' });
    expect(required.check).toMatchObject({ status: 'error', detail: expect.stringContaining('ward run refuses to start runs') });
    expect(required.code).not.toBe(0);
  });
});
