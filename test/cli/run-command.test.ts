import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelProvider, type ModelProvider } from '../fixtures/model-provider/provider.js';
import { FIXTURE_STDIO, processesWith } from '../app/runs/agents.js';
import { CANARY_KEY } from '../app/runs/harness.js';
import { until } from '../support/wait.js';
import { WARD_BIN, ward as runWard } from '../support/ward-cli.js';

// The built command (npm test builds first; test/global-setup.ts builds when dist/ is missing).
let provider: ModelProvider | undefined;
let ward: ChildProcess | undefined;
const scratch: string[] = [];

afterEach(async () => {
  if (ward?.exitCode === null) ward.kill('SIGKILL');
  for (const dir of scratch.splice(0)) {
    for (const pid of processesWith(dir)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
  await provider?.close();
  provider = undefined;
});

function setup(): { home: string; tmp: string; env: NodeJS.ProcessEnv } {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-cli-home-'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-cli-tmp-'));
  scratch.push(home, tmp);
  // A file credential store: no keychain needed, and nothing stored, so the key comes from the env.
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  return { home, tmp, env: { PATH: process.env.PATH, HOME: home, TMPDIR: tmp, WARD_HOME: home, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: provider!.url } };
}

describe('ward run (the built command)', () => {
  it('test_streams_the_answer_prints_ndjson_journal_events_with_json_and_exits_0_on_success', async () => {
    provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'Hello from the model.' }] }, { blocks: [{ type: 'text', text: 'Piped answer.' }] }]);
    const { env } = setup();
    const human = await runWard(['run', '--', 'say', 'hello'], { env, timeoutMs: 60_000 });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('Hello from the model.\n');
    expect(human.stderr).toMatch(/ward: conversation [0-9a-f-]{36}, run [0-9a-f-]{36}\nward: succeeded\n/);
    const conversation = /conversation ([0-9a-f-]{36})/.exec(human.stderr)![1]!;

    const json = await runWard(['run', '--json', '--conversation', conversation], { env, input: 'a piped prompt', timeoutMs: 60_000 });
    expect(json.code).toBe(0);
    const events = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; seq: number; payload: Record<string, unknown> })
      // Deltas depend on timing; a model call is journaled when the provider's answer ends, next to the CLI's events.
      .filter((event) => event.type !== 'assistant_delta' && event.type !== 'model_call');
    expect(events.map((event) => event.type)).toEqual(['run_started', 'user_prompt', 'assistant_text', 'usage', 'run_finished']);
    // After the first turn's six events (its model call included).
    expect(events[0]!.seq).toBe(7);
    expect(events[1]!.payload).toEqual({ text: 'a piped prompt' });
    expect(events[2]!.payload).toEqual({ text: 'Piped answer.' });
  });

  it('test_a_second_ward_run_with_the_same_request_id_attaches_to_the_first_one_instead_of_starting_a_child_r7', async () => {
    provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'one two three four five six' }], deltaDelayMs: 150 }]);
    const { env } = setup();
    const first = runWard(['run', '--request-id', 'req-cli-1', '--', 'same input'], { env, timeoutMs: 60_000 });
    await until(() => provider!.conversationRequests().length === 1, 'the first run to reach the model', 30_000);
    const second = await runWard(['run', '--json', '--request-id', 'req-cli-1', '--', 'same input'], { env, timeoutMs: 60_000 });
    const firstResult = await first;
    expect(firstResult.code).toBe(0);
    // The human view printed the streamed deltas as they came and the final text not a second time.
    expect(firstResult.stdout).toBe('one two three four five six\n');
    expect(second.code).toBe(0);
    const all = second.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: Record<string, unknown> });
    // The slow stream came as deltas first; they add up to the final text.
    const deltas = all.filter((event) => event.type === 'assistant_delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((event) => event.payload.text).join('')).toBe('one two three four five six');
    const events = all.filter((event) => event.type !== 'assistant_delta' && event.type !== 'model_call');
    expect(events.map((event) => event.type)).toEqual(['run_started', 'user_prompt', 'assistant_text', 'usage', 'run_finished']);
    expect(events[2]!.payload.text).toBe('one two three four five six');
    expect(provider.conversationRequests()).toHaveLength(1);

    const conflict = await runWard(['run', '--request-id', 'req-cli-1', '--', 'other input'], { env, timeoutMs: 60_000 });
    expect(conflict.code).toBe(2);
    expect(conflict.stderr).toContain('request req-cli-1 was already used with a different input');
  });

  it('test_ward_agents_create_pins_tools_from_a_stdio_server_and_ward_run_shows_the_tool_timeline', async () => {
    provider = await startModelProvider([
      { blocks: [{ type: 'tool_use', name: 'mcp__ward__fx__echo', input: { text: 'pong' } }] },
      { blocks: [{ type: 'text', text: 'The echo said pong.' }] },
    ]);
    const { env, home } = setup();
    const instructions = path.join(home, 'helper.md');
    fs.writeFileSync(instructions, 'Use echo when asked.');
    const created = await runWard(['agents', 'create', 'helper', '--instructions-file', instructions, '--upstream', `fx=${process.execPath} --import tsx ${FIXTURE_STDIO}`, '--tool', 'fx/echo'], { env, timeoutMs: 60_000 });
    expect(created.stderr).toBe('');
    expect(created.stdout).toBe('published helper@1 with 1 pinned tool(s): fx/echo\n');
    const run = await runWard(['run', '--agent', 'helper', '--', 'echo pong'], { env, timeoutMs: 60_000 });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ {2}→ fx__echo \{"text":"pong"\}\n {2}← fx__echo ok 4 B \d+ ms\nThe echo said pong\.\n$/);
  });

  it('test_stdio_servers_ward_started_die_with_a_sigkilled_ward_s5', async () => {
    provider = await startModelProvider([{ blocks: [{ type: 'tool_use', name: 'mcp__ward__fx__slow', input: { ms: 60_000 } }] }]);
    const { env, home } = setup();
    const marker = `--ward-kill-test-${process.pid}-${Date.now()}`;
    const instructions = path.join(home, 'helper.md');
    fs.writeFileSync(instructions, 'Use slow when asked.');
    // A server that keeps running when its client goes away: only a signal ends it.
    const serverEnv = { ...env, FIXTURE_IGNORE_HANGUP: '1' };
    const created = await runWard(['agents', 'create', 'helper', '--instructions-file', instructions, '--upstream', `fx=${process.execPath} --import tsx ${FIXTURE_STDIO} ${marker}`, '--upstream-env', 'fx=FIXTURE_IGNORE_HANGUP', '--tool', 'fx/slow'], { env: serverEnv, timeoutMs: 60_000 });
    expect(created.code).toBe(0);
    ward = spawn(process.execPath, [WARD_BIN, 'run', '--agent', 'helper', '--', 'be slow'], { env: serverEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    ward.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    await until(() => stdout.includes('→ fx__slow') && processesWith(marker).length > 0, 'the slow call to reach its server', 30_000);
    ward.kill('SIGKILL');
    await new Promise((resolve) => ward!.once('exit', resolve));
    // The server had 59 s of its call left: it must not finish it, nor outlive Ward.
    await until(() => processesWith(marker).length === 0, 'the stdio server to die with Ward', 10_000);
  });


  it('test_ward_doctor_reports_the_pin_and_self_test_runs_the_pinned_cli_offline', async () => {
    provider = await startModelProvider();
    const { env } = setup();
    const doctor = await runWard(['doctor', '--self-test', '--json'], { env, timeoutMs: 60_000 });
    const checks = doctor.stdout.trim().split('\n').map((line) => JSON.parse(line) as { check: string; status: string; detail: string });
    expect(checks.find((check) => check.check === 'pinned CLI')).toMatchObject({ status: 'ok', detail: expect.stringMatching(/^2\.1\.328 \(linux-x64, sha256 a982d38030b9…\) at /) });
    expect(checks.find((check) => check.check === 'CLI self-test')).toMatchObject({ status: 'ok', detail: expect.stringContaining('system/init, assistant text and a success result parsed') });
    // The warm-session protocol too: a follow-up turn went to the same CLI process on stdin (issue 19).
    expect(checks.find((check) => check.check === 'CLI self-test')).toMatchObject({ detail: expect.stringContaining('a follow-up turn in the same process (warm session)') });
    // As a run would: inside the OS sandbox (bwrap works on this machine; test/runner/sandbox.test.ts checks that).
    expect(checks.find((check) => check.check === 'CLI self-test')).toMatchObject({ detail: expect.stringContaining('; inside the OS sandbox'), data: { sandboxed: true } });
    // Offline: the self-test never touched the configured model endpoint.
    expect(provider.requests).toEqual([]);

    const unconfined = await runWard(['doctor', '--self-test', '--json'], { env: { ...env, WARD_SANDBOX: 'off' }, timeoutMs: 60_000 });
    const selfTest = unconfined.stdout.trim().split('\n').map((line) => JSON.parse(line) as { check: string }).find((check) => check.check === 'CLI self-test');
    expect(selfTest).toMatchObject({ status: 'ok', detail: expect.stringContaining('; runs are NOT sandboxed: WARD_SANDBOX=off'), data: { sandboxed: false } });
  });

  it('test_exit_codes_2_for_usage_errors_1_for_a_failed_turn', async () => {
    provider = await startModelProvider([{ kind: 'http_error', status: 400, errorType: 'invalid_request_error', message: 'scripted refusal' }]);
    const { env } = setup();
    const both = await runWard(['run', '--new', '--conversation', 'abc', '--', 'x'], { env, timeoutMs: 60_000 });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give --conversation or --new, not both');
    const failed = await runWard(['run', '--', 'please fail'], { env, timeoutMs: 60_000 });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/ward: failed: /);
  });

  it('test_ctrl_c_stops_the_turn_gracefully_and_exits_130_leaving_no_cli_process_behind', async () => {
    provider = await startModelProvider([{ kind: 'hang' }]);
    const { env, tmp } = setup();
    ward = spawn(process.execPath, [WARD_BIN, 'run', '--', 'wait forever'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    ward.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await until(() => provider!.conversationRequests().length === 1, 'the model call', 30_000);
    ward.kill('SIGINT');
    const code = await new Promise((resolve) => ward!.once('exit', resolve));
    expect(code).toBe(130);
    expect(stderr).toContain('ward: stopping the turn (Ctrl-C again to kill it now)');
    expect(stderr).toContain('ward: stopped: stopped by the user (Ctrl-C)');
    expect(processesWith(tmp)).toEqual([]);
    expect(fs.readdirSync(tmp).filter((name) => name.startsWith('ward-run-'))).toEqual([]);
  });

  it.each([
    ['SIGHUP', 'the terminal was closed (SIGHUP)'],
    ['SIGTERM', 'Ward was asked to end (SIGTERM)'],
  ] as const)('test_%s_stops_the_turn_as_a_stop_with_its_own_reason_and_no_uncertain_run', async (signal, reason) => {
    provider = await startModelProvider([{ kind: 'hang' }]);
    const { env, tmp } = setup();
    ward = spawn(process.execPath, [WARD_BIN, 'run', '--', 'wait forever'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    ward.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await until(() => provider!.conversationRequests().length === 1, 'the model call', 30_000);
    ward.kill(signal);
    const code = await new Promise((resolve) => ward!.once('exit', resolve));
    expect(code).toBe(130);
    expect(stderr).toContain(`ward: stopped: ${reason}`);
    expect(processesWith(tmp)).toEqual([]);
    const listed = JSON.parse((await runWard(['conversations', '--json'], { env, timeoutMs: 60_000 })).stdout.trim()) as { id: string; activeRun: unknown };
    expect(listed.activeRun).toBeNull();
    const events = (await runWard(['replay', listed.id, '--json'], { env, timeoutMs: 60_000 })).stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: { state?: string; reason?: string } });
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', payload: { state: 'stopped', reason } });
  });

  it('test_ward_run_json_head_1_a_closed_output_pipe_stops_the_turn_instead_of_crashing_and_orphaning_the_cli', async () => {
    provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'a b c d e f g h i j k l m n o p' }], deltaDelayMs: 150 }]);
    const { env, tmp } = setup();
    ward = spawn(process.execPath, [WARD_BIN, 'run', '--json', '--', 'talk slowly'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    ward.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await new Promise<void>((resolve) => ward!.stdout!.once('data', () => resolve()));
    ward.stdout!.destroy();
    const code = await new Promise((resolve) => ward!.once('exit', resolve));
    expect(code).toBe(130);
    expect(stderr).not.toContain('EPIPE');
    expect(processesWith(tmp)).toEqual([]);
    const listed = JSON.parse((await runWard(['conversations', '--json'], { env, timeoutMs: 60_000 })).stdout) as { id: string };
    const events = (await runWard(['replay', listed.id, '--json'], { env, timeoutMs: 60_000 })).stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; payload: unknown });
    expect(events.at(-1)).toMatchObject({ type: 'run_finished', payload: { state: 'stopped', reason: 'the output pipe was closed' } });
  });

  it('test_after_ward_run_is_sigkilled_mid_turn_the_next_start_shows_the_run_uncertain_with_every_shown_event_on_disk_r8', async () => {
    provider = await startModelProvider([{ kind: 'hang', blocks: [{ type: 'text', text: 'Shown before the crash.' }] }]);
    const { env, tmp } = setup();
    ward = spawn(process.execPath, [WARD_BIN, 'run', '--json', '--', 'start something'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    ward.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    await until(() => stdout.includes('assistant_text'), 'the streamed text to be shown', 30_000);
    ward.kill('SIGKILL');
    await new Promise((resolve) => ward!.once('exit', resolve));
    const shown = stdout.trim().split('\n').map((line) => JSON.parse(line) as { seq: number; hash: string; conversationId: string });

    // The next start: the run is uncertain and keeps its reservation.
    const listed = await runWard(['conversations', '--json'], { env, timeoutMs: 60_000 });
    const row = JSON.parse(listed.stdout.trim()) as { id: string; activeRun: { state: string } };
    expect(row.activeRun.state).toBe('uncertain');
    const replay = await runWard(['replay', row.id, '--json'], { env, timeoutMs: 60_000 });
    const onDisk = replay.stdout.trim().split('\n').map((line) => JSON.parse(line) as { seq: number; hash: string });
    for (const event of shown) expect(onDisk).toContainEqual(expect.objectContaining({ seq: event.seq, hash: event.hash }));

    // A new prompt is refused until a person reconciles; that start also ends the orphaned CLI
    // and removes its run folder (with the capability in it).
    const again = await runWard(['run', '--conversation', row.id, '--', 'again'], { env, timeoutMs: 60_000 });
    // Exit 6 as README documents for an uncertain run, with the command that frees the conversation.
    expect(again.code).toBe(6);
    expect(again.stderr).toContain('has an uncertain run');
    const runId = (shown[0] as unknown as { runId: string }).runId;
    // The hint is the literal command: the namespace and the run's short id (issue 16 #10).
    expect(again.stderr).toContain(`"ward --namespace default replay ${row.id.slice(0, 8)}"`);
    expect(again.stderr).toContain(`"ward --namespace default reconcile ${runId.slice(0, 8)} --outcome succeeded|failed|stopped --note TEXT"`);
    await until(() => processesWith(tmp).length === 0, 'the orphaned CLI to be gone', 10_000);
    expect(fs.readdirSync(tmp).filter((name) => name.startsWith('ward-run-'))).toEqual([]);
    expect(provider.conversationRequests()).toHaveLength(1);

    // A person checks and records the outcome; the conversation takes prompts again.
    const noNote = await runWard(['reconcile', runId, '--outcome', 'failed'], { env, timeoutMs: 60_000 });
    expect(noNote.code).toBe(2);
    const reconciled = await runWard(['--namespace', 'default', 'reconcile', runId.slice(0, 8), '--outcome', 'failed', '--note', 'checked: nothing happened'], { env, timeoutMs: 60_000 });
    expect(reconciled.code).toBe(0);
    expect(reconciled.stdout).toContain(`run ${runId} recorded as failed`);
    // The replay reads the record as a sentence, not as the stored JSON.
    const replayed = (await runWard(['replay', row.id], { env, timeoutMs: 60_000 })).stdout;
    expect(replayed).toMatch(/run_reconciled {2}reconciled as failed: checked: nothing happened\n/);
    expect(replayed).not.toContain('{"state"');
    provider.push({ blocks: [{ type: 'text', text: 'Back.' }] });
    const after = await runWard(['run', '--conversation', row.id, '--', 'again'], { env, timeoutMs: 60_000 });
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toBe('Back.\n');
  });

  it('test_ward_trace_file_gets_the_steps_of_a_turn_in_time_order_with_step_names_only_and_nothing_without_it', async () => {
    provider = await startModelProvider([{ blocks: [{ type: 'text', text: 'Traced.' }] }, { blocks: [{ type: 'text', text: 'Untraced.' }] }]);
    const { env, tmp } = setup();
    const trace = path.join(tmp, 'turn.trace');
    const traced = await runWard(['run', '--', 'hi'], { env: { ...env, WARD_TRACE_FILE: trace }, timeoutMs: 60_000 });
    expect(traced.code, traced.stderr).toBe(0);
    expect(traced.stdout).toBe('Traced.\n');
    const text = fs.readFileSync(trace, 'utf8');
    expect(fs.statSync(trace).mode & 0o777).toBe(0o600);
    const lines = text.trim().split('\n');
    for (const line of lines) expect(line).toMatch(/^[a-z-]+ \d+\.\d$/);
    const names = lines.map((line) => line.split(' ')[0]);
    // The steps bench/turn.ts reads, each once, in the order a turn passes them.
    const steps = ['modules-loaded', 'command-loaded', 'store-open', 'runs-ready', 'admitted', 'run-started', 'prepared', 'tools-open', 'spawned', 'cli-init', 'first-token', 'cli-result', 'cli-exited', 'anchored', 'app-closed'];
    expect(names.filter((name) => steps.includes(name!))).toEqual(steps);
    const times = lines.map((line) => Number(line.split(' ')[1]));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(text).not.toContain(CANARY_KEY);

    fs.rmSync(trace);
    const untraced = await runWard(['run', '--', 'hi'], { env, timeoutMs: 60_000 });
    expect(untraced.code, untraced.stderr).toBe(0);
    expect(fs.existsSync(trace)).toBe(false);
  });
});
