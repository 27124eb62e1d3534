/**
 * S1–S4 with the real pinned CLI and the scripted provider: every process of a run is in the
 * sandbox runtime's sandbox, sees only its file view, reaches only the hosts the run may reach
 * (through the runtime's proxy), and holds no model key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../main/cli/main.js';
import { isWardError } from '../../main/base/errors.js';
import type { AuditRecord } from '../../main/permissions/audit.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import type { PromptAnswer, PromptQuestion, Prompter } from '../../main/permissions/prompter.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { verifyPinnedCli } from '../../main/runner/pin.js';
import { childrenOf, findInnerProcess } from '../../main/runner/process-tree.js';
import { SandboxEngine } from '../../main/sandbox/engine.js';
import type { RunState } from '../../main/store/runs.js';
import { startModelProvider, toolResultsSeen, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { site } from '../support/sites.js';
import { tempDir } from '../support/temp.js';
import { bash, DONE } from './steps.js';
import { closeHarnessesAfterEach, CANARY_KEY, payloads, startHarness, type Harness } from '../app/runs/harness.js';
import { until } from '../support/wait.js';
import { alive } from '../support/processes.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();


/** A fresh folder holding the turn's workspace and, beside it, a folder the turn was not given. */
function folders(outsideName: string): { root: string; workspace: string; outside: string } {
  const root = fs.realpathSync(tempDir('ward-sandbox-'));
  const workspace = path.join(root, 'workspace');
  const outside = path.join(root, outsideName);
  fs.mkdirSync(workspace);
  fs.mkdirSync(outside);
  return { root, workspace, outside };
}

function decisions(h: Harness, conversationId: string): string[] {
  return payloads<AuditRecord>(h.events(conversationId), 'permission_decision').map((decision) => `${decision.value} ${decision.decision}`);
}

function tree(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(tree)];
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

/** A person who answers from a list and remembers what was asked. */
function person(...answers: PromptAnswer[]): Prompter & { questions: PromptQuestion[] } {
  const questions: PromptQuestion[] = [];
  return {
    interactive: true,
    questions,
    ask: (question) => {
      questions.push(question);
      return Promise.resolve(answers.shift() ?? 'deny');
    },
  };
}

describe('the sandbox runtime around the CLI (S1, S2)', () => {
  it('test_s1_the_sandbox_runtime_works_on_this_machine_so_runs_are_sandboxed_by_default', async () => {
    // The rest of this file is meaningless without it: CI installs bubblewrap, socat and ripgrep.
    await expect(new SandboxEngine('auto').status()).resolves.toMatchObject({ mode: 'auto', confined: true });
  });

  it('test_s2_a_granted_touch_writes_inside_the_workspace_and_the_sandbox_stops_it_outside', async () => {
    const { root, workspace, outside } = folders('not-granted');
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

  it('test_s2_a_granted_cat_cannot_read_a_home_canary_ward_data_or_another_namespaces_database', async () => {
    harness = await startHarness([]);
    const homeCanary = path.join(harness.home, 'home-canary-4c1d.txt');
    fs.writeFileSync(homeCanary, 'home-canary-value-8e2a');
    const other = harness.core.store(parseNamespace('other'));
    const workspace = path.join(fs.realpathSync(tempDir('ward-sandbox-')), 'workspace');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, 'mine.txt'), 'workspace-text-1b9f');
    const ownDb = harness.core.store(harness.ns).file;
    harness.provider.push(bash(`cat ${path.join(workspace, 'mine.txt')}`), bash(`cat ${homeCanary}`), bash(`cat ${other.file}`), bash(`cat ${ownDb}`), DONE);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'cat', permissions: parsePermissionFlags(['--allow-run=cat'], workspace), workspace });
    expect((await handle.done).state).toBe('succeeded');

    expect(decisions(harness, handle.conversationId)).toEqual(['cat allow', 'cat allow', 'cat allow', 'cat allow']);
    const seen = toolResultsSeen(harness.provider);
    expect(seen[0]!.text).toContain('workspace-text-1b9f');
    for (const denied of seen.slice(1, 4)) {
      expect(denied.isError).toBe(true);
      expect(denied.text).toContain('No such file or directory');
    }
    const everything = JSON.stringify(harness.provider.requests.map((request) => request.rawBody));
    expect(everything).not.toContain('home-canary-value-8e2a');
    expect(everything).not.toContain('SQLite format 3');
  });

  it('test_s2_one_conversation_cannot_read_another_conversations_transcript_in_the_same_namespace', async () => {
    // Issue 12 #3: each conversation has its own CLI state folder and a run binds only its own.
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'secret-plan-7a3e noted' }] }]);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'remember secret-plan-7a3e', permissions: parsePermissionFlags([], harness.home) });
    expect((await first.done).state).toBe('succeeded');
    const firstState = path.join(harness.home, 'namespaces');
    const transcripts = fs.readdirSync(firstState, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.jsonl'));
    expect(transcripts).toHaveLength(1);
    const transcript = path.join(firstState, transcripts[0]!);
    expect(transcript).toContain(path.join('conversations', first.conversationId, 'claude'));
    expect(fs.readFileSync(transcript, 'utf8')).toContain('secret-plan-7a3e');

    harness.provider.push(bash(`cat ${transcript}`), bash(`ls -R ${transcript.slice(0, transcript.indexOf(first.conversationId))}`), DONE);
    const second = harness.service.startTurn({ namespace: harness.ns, prompt: 'peek', permissions: parsePermissionFlags(['--allow-run=cat,ls'], harness.home) });
    expect((await second.done).state).toBe('succeeded');
    const [cat, ls] = toolResultsSeen(harness.provider);
    expect(cat!.isError).toBe(true);
    expect(cat!.text).toContain('No such file or directory');
    expect(ls!.text).not.toContain(first.conversationId);
    expect(JSON.stringify(harness.provider.requests.slice(1).map((request) => request.rawBody))).not.toContain('secret-plan-7a3e');
  });

  const MADE_IN_VAR_TMP = `/var/tmp/ward-compose-${process.pid}`;
  it.each([
    ['--allow-read=/etc', 'cat /etc/hostname', () => fs.readFileSync('/etc/hostname', 'utf8').trim()],
    ['--allow-read=/proc,/dev,/usr', 'cat /proc/version', () => fs.readFileSync('/proc/version', 'utf8').trim()],
    ['--allow-write=/var/tmp', `touch ${MADE_IN_VAR_TMP}`, () => (fs.rmSync(MADE_IN_VAR_TMP) ?? '(Bash completed with no output)')],
  ])('test_a_grant_over_a_folder_the_sandbox_mounts_itself_composes_with_it_%s', async (grant, command, expected) => {
    // Issue 12 #7: `--allow-read=/etc` failed every run with "bwrap: Can't create file at /etc/localtime".
    harness = await startHarness([bash(command), DONE]);
    const workspace = fs.realpathSync(tempDir('ward-sandbox-'));
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'run it', permissions: parsePermissionFlags(['--allow-run=cat,touch,echo', grant], workspace), workspace });
    expect(await handle.done).toMatchObject({ state: 'succeeded' });
    expect(payloads(harness.events(handle.conversationId), 'run_started')[0]).toMatchObject({ sandboxed: true });
    expect(toolResultsSeen(harness.provider)[0]!.text.split('\n')[0]).toBe(expected());
  });

  it('test_a_write_grant_into_the_runs_own_dev_or_proc_is_refused_naming_why_when_given_and_when_saved', async () => {
    harness = await startHarness([]);
    const workspace = fs.realpathSync(tempDir('ward-sandbox-'));
    expect(() => harness!.service.startTurn({ namespace: harness!.ns, prompt: 'x', permissions: parsePermissionFlags(['--allow-write=/dev/shm'], workspace), workspace })).toThrow(
      /--allow-write=\/dev\/shm: every sandboxed run has its own \/dev, so a write grant there could not reach this machine's/,
    );
    const io = { stdout: new PassThrough(), stderr: new PassThrough() };
    let stderr = '';
    io.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await main(['permissions', 'grant', '--defaults', '--allow-write=/proc/sys'], { ...io, stdin: new PassThrough(), env: { ...harness.env, WARD_HOME: harness.home } });
    expect(code).not.toBe(0);
    expect(stderr).toContain('every sandboxed run has its own /proc');
  });

  it('test_s2_a_read_denied_file_inside_a_granted_folder_is_hidden_from_every_tool_in_the_sandbox', async () => {
    // Issue 12 #1: Grep over the workspace must not reveal a denied .env, whatever the CLI decides itself.
    const workspace = path.join(fs.realpathSync(tempDir('ward-sandbox-')), 'workspace');
    fs.mkdirSync(workspace);
    fs.writeFileSync(path.join(workspace, '.env'), 'API_TOKEN=env-canary-5d2f\n');
    fs.writeFileSync(path.join(workspace, 'notes.txt'), 'plain notes\n');
    harness = await startHarness([bash(`grep -r . ${workspace}`), DONE]);
    const permissions = parsePermissionFlags(['--allow-run=grep', `--allow-read=${workspace}`, `--deny-read=${path.join(workspace, '.env')}`], workspace);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'grep', permissions, workspace });
    expect((await handle.done).state).toBe('succeeded');
    const seen = toolResultsSeen(harness.provider)[0]!;
    expect(seen.text).toContain('plain notes');
    expect(seen.text).not.toContain('env-canary-5d2f');
  });

  it('test_an_approval_at_a_prompt_cannot_widen_a_running_sandbox_but_a_conversation_grant_reaches_the_next_turn', async () => {
    const { root, workspace, outside } = folders('outside');
    const secret = path.join(outside, 'secret.txt');
    fs.writeFileSync(secret, 'outside-canary-a7c3');
    const read: ScriptStep = { blocks: [{ type: 'tool_use', name: 'Read', input: { file_path: secret } }] };
    harness = await startHarness([read, DONE], { prompter: person('conversation') });
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

  it('test_stop_interrupts_the_sandboxed_cli_and_leaves_nothing_running', async () => {
    harness = await startHarness([{ kind: 'hang' }], { stopGraceMs: 60_000 });
    const store = harness.core.store(harness.ns);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'wait' });
    await until(() => harness!.provider.conversationRequests().length === 1, 'the model call');
    const wrapperPid = handle.childPid()!;
    const pinned = await verifyPinnedCli();
    const cliPid = findInnerProcess(wrapperPid, pinned.path);
    expect(cliPid).not.toBeNull();
    // R1: the process inside the sandbox runs the verified file (same device and inode), in its own mount namespace.
    const exe = fs.statSync(`/proc/${cliPid}/exe`);
    const file = fs.statSync(pinned.path);
    expect([exe.dev, exe.ino]).toEqual([file.dev, file.ino]);
    expect(fs.readlinkSync(`/proc/${cliPid}/ns/mnt`)).not.toBe(fs.readlinkSync('/proc/self/ns/mnt'));
    // S3: the CLI has no network of its own (a namespace without the host's interfaces).
    expect(fs.readlinkSync(`/proc/${cliPid}/ns/net`)).not.toBe(fs.readlinkSync('/proc/self/ns/net'));
    const processes = tree(wrapperPid);
    expect(processes.some((pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.endsWith('bwrap'))).toBe(true);
    // No process's argv carries the model key or a capability: the wrapper names paths only.
    const [runDir] = fs.readdirSync(harness.tmpRoot).map((name) => path.join(harness!.tmpRoot, name));
    // Its agent has no MCP tools: no MCP server, so the one capability it holds is the gateway's, in its environment.
    expect(JSON.parse(fs.readFileSync(path.join(runDir!, 'mcp.json'), 'utf8'))).toEqual({ mcpServers: {} });
    const capability = fs.readFileSync(`/proc/${cliPid}/environ`, 'utf8').split('\0').find((entry) => entry.startsWith('ANTHROPIC_API_KEY='))!.slice('ANTHROPIC_API_KEY='.length);
    expect(capability).toMatch(/^[A-Za-z0-9_-]{40,}$/);
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
    // The grace period is a minute, so the CLI ended on the interrupt itself: it printed its result (usage).
    expect(payloads(harness.events(handle.conversationId), 'usage')).toHaveLength(1);
    // The group kill ends the wrapper; bubblewrap's namespaces take the rest within moments.
    await until(() => processes.every((pid) => !alive(pid)), "the sandbox's processes to be gone", 15_000);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
  });

  it('test_s1_require_without_a_sandbox_refuses_the_run_and_spawns_nothing', async () => {
    // An engine for a platform without a sandbox stands in for a machine without bubblewrap.
    harness = await startHarness([DONE], { sandbox: new SandboxEngine('require', null) });
    let refused: unknown;
    try {
      harness.service.startTurn({ namespace: harness.ns, prompt: 'hello' });
    } catch (error) {
      refused = error;
    }
    expect(isWardError(refused, 'sandbox_unavailable')).toBe(true);
    expect((refused as Error).message).toBe(`WARD_SANDBOX=require and no sandbox for ${process.platform}; the run was not started`);
    const store = harness.core.store(harness.ns);
    expect(store.db.prepare('SELECT count(*) AS n FROM runs').get()).toEqual({ n: 0 });
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
    expect(harness.provider.requests).toEqual([]);
  });

  it('test_an_unknown_ward_sandbox_value_is_refused_with_the_choices', async () => {
    await expect(startHarness([DONE], { env: { WARD_SANDBOX: 'maybe' } })).rejects.toThrow('WARD_SANDBOX must be off, require or auto (got "maybe")');
  });

  it('test_ward_doctor_says_what_confines_runs_part_by_part', async () => {
    const doctor = async (env: NodeJS.ProcessEnv) => {
      const stdout = new PassThrough();
      let out = '';
      stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const code = await main(['doctor', '--json'], { stdout, stderr: new PassThrough(), stdin: new PassThrough(), env: { WARD_HOME: tempDir(), ...env } });
      const check = out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { check: string; status: string; detail: string; data: Record<string, unknown> })
        .find((entry) => entry.check === 'sandbox');
      return { code, check };
    };
    expect((await doctor({ PATH: process.env.PATH })).check).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/^runs are sandboxed: /),
      data: { sandboxed: true, network: expect.stringContaining('only through Ward'), modelKey: expect.stringContaining('never in the child') },
    });
    expect((await doctor({ PATH: process.env.PATH, WARD_SANDBOX: 'off' })).check).toMatchObject({ status: 'warning', detail: 'runs are NOT sandboxed: WARD_SANDBOX=off', data: { sandboxed: false } });
  });
});

describe('the network of a run (S3)', () => {
  it('test_s3_bash_curl_reaches_a_granted_host_and_an_ungranted_one_is_asked_about_and_denied', async () => {
    const granted = await site('granted');
    const other = await site('other');
    const asker = person('deny');
    harness = await startHarness([bash(`curl -sS -m 10 ${granted.url}`), bash(`curl -sS -m 10 ${other.url}`), DONE], { prompter: asker });
    const permissions = parsePermissionFlags(['--allow-run=curl', `--allow-net=${granted.hostPort}`], '/');
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'curl', permissions });
    expect((await handle.done).state).toBe('succeeded');
    const [first, second] = toolResultsSeen(harness.provider);
    expect(first!.text).toContain('hello from granted');
    expect(second!.text).not.toContain('hello from other');
    expect(other.hits()).toBe(0);
    // The person was asked about the host, like any permission, and the answer is journaled.
    expect(asker.questions).toEqual([expect.objectContaining({ kind: 'net', value: other.hostPort })]);
    expect(payloads<AuditRecord>(harness.events(handle.conversationId), 'permission_decision')).toContainEqual(
      expect.objectContaining({ kind: 'net', value: other.hostPort, decision: 'deny', via: 'sandbox', answerer: { by: 'person', answer: 'deny' } }),
    );
  });

  it('test_s3_a_host_allowed_for_this_conversation_works_and_works_again_next_turn_without_asking', async () => {
    const host = await site('asked');
    const asker = person('conversation');
    const curl = bash(`curl -sS -m 10 ${host.url}`);
    harness = await startHarness([curl, DONE], { prompter: asker });
    const permissions = parsePermissionFlags(['--allow-run=curl'], '/');
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'curl', permissions });
    expect((await first.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider)[0]!.text).toContain('hello from asked');
    harness.provider.push(curl, DONE);
    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'again', permissions });
    expect((await second.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider).at(-1)!.text).toContain('hello from asked');
    expect(asker.questions).toHaveLength(1);
    expect(host.hits()).toBe(2);
  });

  it('test_s3_dns_and_a_raw_tcp_connect_from_a_granted_command_get_nowhere', async () => {
    const target = await site('raw');
    harness = await startHarness([bash('getent hosts example.com; echo dns-exit=$?'), bash(`timeout 5 bash -c 'echo hi > /dev/tcp/127.0.0.1/${target.hostPort.split(':')[1]}'; echo tcp-exit=$?`), DONE], { prompter: person('once', 'once') });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'escape', permissions: parsePermissionFlags(['--allow-run=getent,timeout'], '/') });
    expect((await handle.done).state).toBe('succeeded');
    const [dns, tcp] = toolResultsSeen(harness.provider);
    expect(dns!.text).toMatch(/dns-exit=[1-9]/);
    expect(tcp!.text).toMatch(/tcp-exit=[1-9]/);
    expect(target.hits()).toBe(0);
  });

  it('test_s3_two_concurrent_runs_reach_only_their_own_hosts_and_each_question_comes_from_its_own_run', async () => {
    let runs: string[] = [];
    const a = await site('alpha');
    const b = await site('beta');
    const asker = person('deny', 'deny');
    // Each run has its own scripted model (a second namespace's profile names a second provider), so the two scripts cannot interleave.
    harness = await startHarness([bash(`curl -sS -m 10 ${a.url} ${b.url}`), DONE], { prompter: asker });
    const second = await startModelProvider([bash(`curl -sS -m 10 ${b.url} ${a.url}`), DONE]);
    const other = harness.core.createNamespace('other');
    fs.writeFileSync(path.join(path.dirname(other.file), 'model-profiles.json'), JSON.stringify({ profiles: { default: { baseUrl: second.url, model: 'claude-sonnet-4-5' } } }));
    try {
      const runA = harness.service.startTurn({ namespace: harness.ns, prompt: 'alpha', permissions: parsePermissionFlags(['--allow-run=curl', `--allow-net=${a.hostPort}`], '/') });
      const runB = harness.service.startTurn({ namespace: parseNamespace('other'), prompt: 'beta', permissions: parsePermissionFlags(['--allow-run=curl', `--allow-net=${b.hostPort}`], '/') });
      expect((await runA.done).state).toBe('succeeded');
      expect((await runB.done).state).toBe('succeeded');
      // Each saw its own host and not the other's.
      const [seenByA] = toolResultsSeen(harness.provider);
      const [seenByB] = toolResultsSeen(second);
      expect(seenByA!.text).toContain('hello from alpha');
      expect(seenByA!.text).not.toContain('hello from beta');
      expect(seenByB!.text).toContain('hello from beta');
      expect(seenByB!.text).not.toContain('hello from alpha');
      expect(a.hits()).toBe(1);
      expect(b.hits()).toBe(1);
      runs = [runA.runId, runB.runId];
    } finally {
      await second.close();
    }
    const [runAId, runBId] = runs;
    // Each question names the run that tried the other's host.
    await until(() => asker.questions.length === 2, 'both questions');
    expect(asker.questions.map((question) => [question.runId, question.value]).sort()).toEqual([
      [runAId, b.hostPort],
      [runBId, a.hostPort],
    ].sort());
  });
});
