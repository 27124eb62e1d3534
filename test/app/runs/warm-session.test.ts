/**
 * Warm sessions (issue 19): the desktop keeps a conversation's pinned CLI running between turns
 * and hands it each next turn on stdin. Real parts: the pinned CLI, the scripted model provider,
 * the broker, the gateway and (on this machine) the bubblewrap sandbox.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { RunService } from '../../../main/app/runs/run-service.js';
import { ApprovalQueue } from '../../../main/permissions/approval-queue.js';
import { GrantStore } from '../../../main/permissions/grant-store.js';
import { verifyPinnedCli } from '../../../main/runner/pin.js';
import { RUN_DIR_PREFIX } from '../../../main/runner/run-dir.js';
import { findInnerProcess } from '../../../main/runner/process-tree.js';
import { DataFolder } from '../../../main/store/data-folder.js';
import { parseNamespace } from '../../../main/namespaces/namespace.js';
import { startModelProvider, userTextIn, type ModelProvider } from '../../fixtures/model-provider/provider.js';
import { ward } from '../../support/ward-cli.js';
import { processesWith } from './agents.js';
import { CANARY_KEY, payloads, procEntries, processGroupAlive, types, type Harness } from './harness.js';
import { answer, turn, warmHarness } from './warm.js';
import { until } from '../../support/wait.js';

let harness: Harness | undefined;
let host: ChildProcessWithoutNullStreams | undefined;
let provider: ModelProvider | undefined;
const scratch: string[] = [];
afterEach(async () => {
  if (host?.exitCode === null) host.kill('SIGKILL');
  host = undefined;
  await harness?.close();
  harness = undefined;
  await provider?.close();
  provider = undefined;
  for (const dir of scratch.splice(0)) {
    for (const pid of processesWith(dir)) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** A turn by `ward run` in its own process on the harness's data (a terminal, or yesterday's Ward); returns its `--json` outcome. */
async function wardRunElsewhere(h: Harness, args: readonly string[]): Promise<{ conversationId: string; runId: string }> {
  const result = await ward(['run', '--json', ...args], {
    env: { HOME: h.home, WARD_HOME: h.home, TMPDIR: h.tmpRoot, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS, ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: h.provider.url },
    timeoutMs: 60_000,
  });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { conversationId: string; runId: string };
}

/** The desktop's core in its own process (test/fixtures/warm-host), on a data folder of its own, so a test can SIGKILL it. */
function startWarmHost(model: ModelProvider) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-warm-home-'));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-warm-tmp-'));
  scratch.push(home, tmp);
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
  const env = { PATH: process.env.PATH, HOME: home, TMPDIR: tmp, WARD_HOME: home, LANG: 'C.UTF-8', ANTHROPIC_API_KEY: CANARY_KEY, WARD_MODEL_BASE_URL: model.url };
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('test/fixtures/warm-host/host.ts')], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  host = child;
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const lines: Record<string, unknown>[] = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
  const ask = (request: Record<string, unknown>) => child.stdin.write(`${JSON.stringify(request)}\n`);
  return { home, tmp, lines, ask, stderr: () => stderr };
}

describe('a warm session keeps the conversation’s CLI between turns (issue 19)', () => {
  it('test_two_turns_run_in_one_cli_process_each_a_journaled_run_the_second_keeping_the_context_and_holding_no_key', async () => {
    harness = await warmHarness([answer('Lisbon is the capital.'), answer('About 545,000 people.')]);
    const first = await turn(harness, 'Tell me about Lisbon.');
    expect(first.outcome.state).toBe('succeeded');
    // The CLI lives on after its turn, waiting for the next one.
    expect(processGroupAlive(first.pid!)).toBe(true);

    const second = await turn(harness, 'How many live there?', first.handle.conversationId);
    expect(second.outcome.state).toBe('succeeded');
    expect(second.pid).toBe(first.pid);
    expect(second.handle.runId).not.toBe(first.handle.runId);
    // The same process sent the first answer along with the new question.
    const request = harness.provider.conversationRequests()[1]!;
    expect(request.rawBody).toContain('Lisbon is the capital.');
    expect(userTextIn(request)).toContain('How many live there?');

    // Each turn is its own run in the journal, from run_started to run_finished, with its own events.
    const events = harness.events(first.handle.conversationId);
    const ofRun = (runId: string) => types(events.filter((event) => event.runId === runId)).filter((type) => type !== 'assistant_delta');
    expect(ofRun(first.handle.runId)).toEqual(['run_started', 'user_prompt', 'assistant_text', 'usage', 'run_finished']);
    expect(ofRun(second.handle.runId)).toEqual(['run_started', 'user_prompt', 'assistant_text', 'usage', 'run_finished']);
    expect(payloads(events.filter((event) => event.runId === second.handle.runId), 'assistant_text')).toEqual([{ text: 'About 545,000 people.' }]);
    expect(payloads(events, 'model_call').length).toBe(2);

    // The warm child holds the gateway capability, never the key; the capability is nowhere in the journal.
    const pinned = await verifyPinnedCli();
    const cli = findInnerProcess(first.pid!, pinned.path) ?? first.pid!;
    const environ = procEntries(cli, 'environ');
    const capability = environ.find((entry) => entry.startsWith('ANTHROPIC_API_KEY='))!.slice('ANTHROPIC_API_KEY='.length);
    expect(capability).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(environ.join('\n')).not.toContain(CANARY_KEY);
    expect(procEntries(cli, 'cmdline')).toEqual(expect.arrayContaining(['--input-format', 'stream-json']));
    expect(procEntries(cli, 'cmdline').join('\n')).not.toContain('How many live there?');
    const journal = JSON.stringify(events);
    expect(journal).not.toContain(CANARY_KEY);
    expect(journal).not.toContain(capability);

    // Closing the app ends the warm CLI and removes its run folder with the capability (B2).
    await harness.app.close();
    await until(() => !processGroupAlive(first.pid!), 'the warm CLI to end with the app', 10_000);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
  });

  it('test_a_question_in_the_second_turn_names_the_second_run_and_a_conversation_grant_given_there_starts_a_cli_that_sees_the_file', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ward-warm-ask-')));
    scratch.push(root);
    fs.mkdirSync(path.join(root, 'granted'));
    const outside = path.join(root, 'outside.txt');
    fs.writeFileSync(outside, 'the outside words');
    const read = { blocks: [{ type: 'tool_use' as const, name: 'Read', input: { file_path: outside } }] };
    const queue = new ApprovalQueue(60_000);
    harness = await warmHarness([answer('Ready.'), read, answer('Asked.'), read, answer('Read it.')], { prompter: queue });
    const store = harness.core.store(harness.ns);
    // Read is offered (granted in one folder), so a read elsewhere is asked about.
    new GrantStore(store.db).add({ scope: 'agent', agentId: RunService.resolveAgent(store).agentId, effect: 'allow', kind: 'read', value: path.join(root, 'granted'), grantedBy: 'test' });
    const first = await turn(harness, 'get ready');
    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.handle.conversationId, prompt: 'read the outside file' });
    await until(() => queue.pending(harness!.ns).length === 1, 'the question of the second turn');
    const [question] = queue.pending(harness.ns);
    expect(question).toMatchObject({ conversationId: first.handle.conversationId, runId: second.runId });
    queue.answer(harness.ns, question!.id, 'allow_conversation');
    expect((await second.done).state).toBe('succeeded');
    expect(second.childPid()).toBe(first.pid);
    const decisions = harness.events(first.handle.conversationId).filter((event) => event.type === 'permission_decision');
    expect(decisions.map((event) => [event.runId, (event.payload as { decision: string }).decision])).toEqual([[second.runId, 'allow']]);

    // The grant changed how a CLI is started: the next turn gets a new one, which sees the file unasked.
    const third = await turn(harness, 'read it again', first.handle.conversationId);
    expect(third.outcome.state).toBe('succeeded');
    expect(third.pid).not.toBe(first.pid);
    expect(queue.pending(harness.ns)).toEqual([]);
    expect(JSON.stringify(harness.provider.conversationRequests()[4]!.body)).toContain('the outside words');
  });

  it('test_stop_during_the_second_turn_interrupts_it_the_run_is_stopped_and_the_next_turn_still_answers', async () => {
    harness = await warmHarness([answer('First.'), { kind: 'hang', blocks: [{ type: 'text', text: 'Thinking' }] }, answer('Third.')]);
    const first = await turn(harness, 'one');
    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.handle.conversationId, prompt: 'two' });
    await until(() => harness!.provider.conversationRequests().length === 2, 'the second model call');
    const stopped = await harness.service.stop(second.runId);
    expect(stopped).toMatchObject({ state: 'stopped', reason: 'stopped by the user' });
    const events = harness.events(first.handle.conversationId).filter((event) => event.runId === second.runId);
    expect(types(events)).toContain('run_stopping');
    expect(types(events).at(-1)).toBe('run_finished');

    const third = await turn(harness, 'three', first.handle.conversationId);
    expect(third.outcome.state).toBe('succeeded');
    expect(userTextIn(harness.provider.conversationRequests()[2]!)).toContain('three');
  });

  it('test_a_cli_killed_between_turns_is_noticed_and_the_next_turn_resumes_the_conversation_in_a_new_process', async () => {
    harness = await warmHarness([answer('Remember the word heron.'), answer('Heron.')]);
    const first = await turn(harness, 'Pick a word.');
    process.kill(-first.pid!, 'SIGKILL');
    await until(() => !processGroupAlive(first.pid!), 'the killed CLI to be gone');
    // Its run folder with the capability goes once the death is noticed (B2).
    await until(() => fs.readdirSync(harness!.tmpRoot).length === 0, 'the dead session’s run folder to go');

    const second = await turn(harness, 'Which word?', first.handle.conversationId);
    expect(second.outcome.state).toBe('succeeded');
    expect(second.pid).not.toBe(first.pid);
    // R4: the new CLI resumed the session from its transcript.
    expect(harness.provider.conversationRequests()[1]!.rawBody).toContain('Remember the word heron.');
  });

  it('test_a_turn_run_elsewhere_between_two_desktop_turns_is_not_lost_the_next_turn_resumes_it_in_a_new_cli', async () => {
    harness = await warmHarness([answer('Remember the word heron.'), answer('Also remember otter.'), answer('Heron and otter.')]);
    const first = await turn(harness, 'Pick a word.');
    expect(processGroupAlive(first.pid!)).toBe(true);

    // `ward run` from a terminal, its own process on the same data, takes a turn of the same conversation.
    await wardRunElsewhere(harness, ['--conversation', first.handle.conversationId, '--', 'Pick another.']);

    // The kept CLI never saw that turn: the next desktop turn starts a CLI that resumes the transcript with it.
    const third = await turn(harness, 'Which words?', first.handle.conversationId);
    expect(third.outcome).toMatchObject({ state: 'succeeded' });
    expect(third.pid).not.toBe(first.pid);
    expect(processGroupAlive(first.pid!)).toBe(false);
    const request = harness.provider.conversationRequests()[2]!;
    expect(request.rawBody).toContain('Remember the word heron.');
    expect(request.rawBody).toContain('Also remember otter.');
  });

  it('test_a_grant_revoked_between_turns_ends_the_warm_cli_so_the_next_turn_cannot_use_it', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-warm-grant-'));
    scratch.push(root);
    const granted = path.join(root, 'notes');
    fs.mkdirSync(granted);
    harness = await warmHarness([
      { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: path.join(granted, 'a.txt'), content: 'first' } }] },
      answer('Wrote a.'),
      { blocks: [{ type: 'tool_use', name: 'Write', input: { file_path: path.join(granted, 'b.txt'), content: 'second' } }] },
      answer('Tried b.'),
    ]);
    const store = harness.core.store(harness.ns);
    const agent = RunService.resolveAgent(store);
    const grants = new GrantStore(store.db);
    const grant = grants.add({ scope: 'agent', agentId: agent.agentId, effect: 'allow', kind: 'write', value: granted, grantedBy: 'test' });

    const first = await turn(harness, 'write a');
    expect(first.outcome.state).toBe('succeeded');
    expect(fs.readFileSync(path.join(granted, 'a.txt'), 'utf8')).toBe('first');

    grants.revoke(grant.id);
    const second = await turn(harness, 'write b', first.handle.conversationId);
    expect(second.outcome.state).toBe('succeeded');
    // A new CLI, started without the grant; the kept one is gone.
    expect(second.pid).not.toBe(first.pid);
    expect(processGroupAlive(first.pid!)).toBe(false);
    expect(fs.existsSync(path.join(granted, 'b.txt'))).toBe(false);
  });

  it('test_an_idle_session_is_closed_after_warm_session_minutes_and_the_next_turn_resumes_with_fresh_capabilities', async () => {
    harness = await warmHarness([answer('The code is 7.'), answer('It was 7.')], { warmSessionMs: 1_500 });
    const first = await turn(harness, 'Remember code 7.');
    expect(processGroupAlive(first.pid!)).toBe(true);
    await until(() => !processGroupAlive(first.pid!), 'the idle session to close', 15_000);
    // The CLI exits on its own once stdin closes; its folder with the capability goes as Ward sees it exit.
    await until(() => fs.readdirSync(harness!.tmpRoot).length === 0, 'the closed session’s run folder to go');

    const second = await turn(harness, 'What was the code?', first.handle.conversationId);
    expect(second.outcome.state).toBe('succeeded');
    expect(second.pid).not.toBe(first.pid);
    expect(harness.provider.conversationRequests()[1]!.rawBody).toContain('The code is 7.');
    const started = payloads<{ session: string }>(harness.events(first.handle.conversationId), 'run_started');
    expect(started.map((payload) => payload.session)).toEqual(['new', 'resume']);
  });

  it('test_at_most_two_sessions_are_kept_the_least_recently_used_is_closed_when_a_third_conversation_ends_its_turn', async () => {
    harness = await warmHarness([answer('A.'), answer('B.'), answer('C.')]);
    const a = await turn(harness, 'first conversation');
    const b = await turn(harness, 'second conversation');
    expect([processGroupAlive(a.pid!), processGroupAlive(b.pid!)]).toEqual([true, true]);
    const c = await turn(harness, 'third conversation');
    await until(() => !processGroupAlive(a.pid!), 'the least recently used session to close');
    expect([processGroupAlive(b.pid!), processGroupAlive(c.pid!)]).toEqual([true, true]);
  });

  it('test_warm_session_minutes_0_in_settings_json_turns_warm_sessions_off', async () => {
    harness = await warmHarness([answer('One.'), answer('Two.')]);
    fs.writeFileSync(path.join(harness.home, 'settings.json'), JSON.stringify({ warmSessionMinutes: 0 }));
    const first = await turn(harness, 'one');
    expect(first.outcome.state).toBe('succeeded');
    expect(processGroupAlive(first.pid!)).toBe(false);
    const second = await turn(harness, 'two', first.handle.conversationId);
    expect(second.outcome.state).toBe('succeeded');
    expect(second.pid).not.toBe(first.pid);
  });

  it('test_ward_sigkilled_during_a_warm_sessions_turn_leaves_no_cli_behind_and_the_next_start_finds_the_run_uncertain', async () => {
    provider = await startModelProvider([answer('First.'), { kind: 'hang', blocks: [{ type: 'text', text: 'Thinking' }] }]);
    const { home, tmp, lines, ask, stderr } = startWarmHost(provider);

    ask({ prompt: 'one' });
    await until(() => lines.some((line) => line.event === 'done'), `the first turn (host stderr: ${stderr().slice(-500)})`, 60_000);
    const first = lines.find((line) => line.event === 'done')!;
    expect(first.state).toBe('succeeded');
    const pid = first.pid as number;
    expect(processGroupAlive(pid)).toBe(true);

    ask({ prompt: 'two', conversationId: first.conversationId });
    await until(() => provider!.conversationRequests().length === 2, 'the second turn to reach the model', 30_000);
    const secondRun = lines.filter((line) => line.event === 'started')[1]!.runId as string;
    host!.kill('SIGKILL');
    await new Promise((resolve) => host!.once('exit', resolve));
    // The CLI goes with Ward (the sandbox's --die-with-parent, else stdin's end), within a bound.
    await until(() => !processGroupAlive(pid) && processesWith(tmp).length === 0, 'the warm CLI to die with Ward', 15_000);

    // The next Ward start finds the run its dead owner left: uncertain (R8), never still running.
    const folder = new DataFolder(home);
    try {
      const run = folder.store(parseNamespace('default')).runs.get(secondRun);
      expect(run.state).toBe('uncertain');
    } finally {
      folder.close();
    }
  });
});

describe('a chat’s CLI started ahead, as the person starts writing (issue 19)', () => {
  /** The CLI processes Ward started in this harness (their argv names the run folder under tmpRoot). */
  const clis = (h: Harness) => processesWith(h.tmpRoot);

  it('test_a_cli_started_ahead_answers_the_first_message_in_the_same_process_and_nothing_is_journaled_or_sent_before_it', async () => {
    harness = await warmHarness([answer('Remember the word heron.'), answer('Heron.')]);
    // Yesterday's chat: its turn ran in another Ward process, so no CLI of it runs here.
    const { conversationId } = await wardRunElsewhere(harness, ['--', 'Pick a word.']);
    expect(clis(harness)).toEqual([]);
    const eventsBefore = harness.events(conversationId).length;

    await expect(harness.service.prestart({ namespace: harness.ns, conversationId })).resolves.toBe('started');
    // Started means spawned: the sandbox's wrapper execs the CLI (whose argv names the run folder) a moment later.
    await until(() => clis(harness!).length > 0, 'the CLI started ahead to be running');
    const started = clis(harness);
    // Asking again while it runs starts nothing more: still one CLI, with one run folder.
    await expect(harness.service.prestart({ namespace: harness.ns, conversationId })).resolves.toBe('running');
    expect(fs.readdirSync(harness.tmpRoot).length).toBe(1);
    // Before the message: nothing in the journal, no model call, and the child holds no key (a capability only).
    expect(harness.events(conversationId).length).toBe(eventsBefore);
    expect(harness.provider.conversationRequests().length).toBe(1);
    const pinned = await verifyPinnedCli();
    const cli = findInnerProcess(started[0]!, pinned.path) ?? started[0]!;
    expect(procEntries(cli, 'environ').join('\n')).not.toContain(CANARY_KEY);

    const second = await turn(harness, 'Which word?', conversationId);
    expect(second.outcome.state).toBe('succeeded');
    expect(started).toContain(second.pid);
    // The CLI resumed the conversation: yesterday's answer went to the model with the new question.
    const request = harness.provider.conversationRequests()[1]!;
    expect(request.rawBody).toContain('Remember the word heron.');
    expect(userTextIn(request)).toContain('Which word?');
    // The turn is a whole run in the journal, and its init was checked (R3) as it came.
    const ofRun = types(harness.events(conversationId).filter((event) => event.runId === second.handle.runId)).filter((type) => type !== 'assistant_delta');
    expect(ofRun).toEqual(['run_started', 'user_prompt', 'assistant_text', 'usage', 'run_finished']);
  });

  it('test_a_message_sent_while_its_cli_is_still_starting_waits_for_that_cli_instead_of_starting_a_second', async () => {
    harness = await warmHarness([answer('First.'), answer('Second.')]);
    const { conversationId } = await wardRunElsewhere(harness, ['--', 'one']);

    const ahead = harness.service.prestart({ namespace: harness.ns, conversationId });
    const second = await turn(harness, 'two', conversationId);
    await expect(ahead).resolves.toBe('started');
    expect(second.outcome.state).toBe('succeeded');
    // One CLI, one run folder: the turn took the CLI started ahead.
    expect(fs.readdirSync(harness.tmpRoot).length).toBe(1);
    expect(clis(harness)).toContain(second.pid);
  });

  it('test_nothing_is_started_ahead_while_a_turn_holds_the_chat_or_with_warm_sessions_off', async () => {
    harness = await warmHarness([answer('First.'), { kind: 'hang', blocks: [{ type: 'text', text: 'Thinking' }] }]);
    const first = await turn(harness, 'one');
    const busy = harness.service.startTurn({ namespace: harness.ns, prompt: 'two', conversationId: first.handle.conversationId });
    await until(() => harness!.provider.conversationRequests().length === 2, 'the second turn to reach the model');
    await expect(harness.service.prestart({ namespace: harness.ns, conversationId: first.handle.conversationId })).resolves.toBe('busy');
    await harness.service.stop(busy.runId);

    fs.writeFileSync(path.join(harness.home, 'settings.json'), JSON.stringify({ warmSessionMinutes: 0 }));
    const other = await turn(harness, 'another chat');
    const running = clis(harness);
    await expect(harness.service.prestart({ namespace: harness.ns, conversationId: other.handle.conversationId })).resolves.toBe('not_ahead');
    expect(clis(harness)).toEqual(running);

    // An environment grant is decided (and journaled) with each turn: such a chat is not started ahead either.
    fs.writeFileSync(path.join(harness.home, 'settings.json'), JSON.stringify({ warmSessionMinutes: 10 }));
    const store = harness.core.store(harness.ns);
    new GrantStore(store.db).add({ scope: 'agent', agentId: RunService.resolveAgent(store).agentId, effect: 'allow', kind: 'env', value: 'LANG', grantedBy: 'test' });
    const folders = fs.readdirSync(harness.tmpRoot);
    await expect(harness.service.prestart({ namespace: harness.ns, conversationId: other.handle.conversationId })).resolves.toBe('not_ahead');
    expect(fs.readdirSync(harness.tmpRoot)).toEqual(folders);
  });

  it('test_a_chat_whose_kept_cli_just_died_gets_a_new_one_ahead_and_the_dead_ones_run_folder_goes', async () => {
    harness = await warmHarness([answer('First.'), answer('Second.')]);
    const first = await turn(harness, 'one');
    process.kill(-first.pid!, 'SIGKILL');
    await until(() => !processGroupAlive(first.pid!), 'the kept CLI to be gone');
    // Asked at once, before Ward may have closed the dead session: a new CLI starts all the same.
    await expect(harness.service.prestart({ namespace: harness.ns, conversationId: first.handle.conversationId })).resolves.toBe('started');
    await until(() => fs.readdirSync(harness!.tmpRoot).length === 1, 'only the new CLI’s run folder to be left');
    const second = await turn(harness, 'two', first.handle.conversationId);
    expect(second.outcome.state).toBe('succeeded');
    expect(clis(harness)).toContain(second.pid);
  });

  it('test_a_kept_cli_started_before_a_grant_changed_is_replaced_as_the_person_starts_writing', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ward-warm-stale-')));
    scratch.push(root);
    harness = await warmHarness([answer('The code is 7.'), answer('It was 7.')]);
    const first = await turn(harness, 'Remember code 7.');
    // Same launch: the kept CLI is the one the next message goes to.
    await expect(harness.service.prestart({ namespace: harness.ns, conversationId: first.handle.conversationId })).resolves.toBe('running');
    expect(clis(harness)).toContain(first.pid);

    const store = harness.core.store(harness.ns);
    new GrantStore(store.db).add({ scope: 'agent', agentId: RunService.resolveAgent(store).agentId, effect: 'allow', kind: 'read', value: root, grantedBy: 'test' });
    // The grant changes how the CLI is started: the kept one could not take the turn, a new one starts now.
    await expect(harness.service.prestart({ namespace: harness.ns, conversationId: first.handle.conversationId })).resolves.toBe('started');
    expect(processGroupAlive(first.pid!)).toBe(false);
    expect(fs.readdirSync(harness.tmpRoot).length).toBe(1);
    const second = await turn(harness, 'What was the code?', first.handle.conversationId);
    expect(second.outcome.state).toBe('succeeded');
    expect(clis(harness)).toContain(second.pid);
    expect(second.pid).not.toBe(first.pid);
    // The new CLI resumed the conversation.
    expect(harness.provider.conversationRequests()[1]!.rawBody).toContain('The code is 7.');
  });

  it('test_ward_sigkilled_while_a_chats_cli_waits_started_ahead_leaves_no_cli_behind', async () => {
    provider = await startModelProvider([answer('First.')]);
    const { tmp, lines, ask, stderr } = startWarmHost(provider);
    ask({ prompt: 'one' });
    await until(() => lines.some((line) => line.event === 'done'), `the first turn (host stderr: ${stderr().slice(-500)})`, 60_000);
    const first = lines.find((line) => line.event === 'done')!;
    // The chat's CLI ends; the person starts writing in it again: a new CLI starts ahead and waits.
    const clis = () => processesWith(path.join(tmp, RUN_DIR_PREFIX));
    process.kill(-(first.pid as number), 'SIGKILL');
    // Gone from the process table, not only from `ps` (a zombie has no argv): Ward has reaped it, so it knows the CLI died.
    await until(() => !processGroupAlive(first.pid as number) && clis().length === 0, 'the first CLI to be gone');
    ask({ ahead: true, conversationId: first.conversationId });
    await until(() => lines.some((line) => line.event === 'ahead'), `the CLI to start ahead (host stderr: ${stderr().slice(-500)})`, 30_000);
    expect(lines.find((line) => line.event === 'ahead')!.outcome).toBe('started');
    await until(() => clis().length > 0, 'the CLI started ahead to be running');

    host!.kill('SIGKILL');
    await new Promise((resolve) => host!.once('exit', resolve));
    // It goes with Ward (the sandbox's --die-with-parent, else stdin's end), and so do the sandbox's helpers.
    await until(() => processesWith(tmp).length === 0, 'the CLI started ahead to die with Ward', 15_000);
  });

  it('test_ward_closing_while_a_cli_is_started_ahead_leaves_no_cli_and_no_run_folder_behind', async () => {
    harness = await warmHarness([answer('First.')]);
    const { conversationId } = await wardRunElsewhere(harness, ['--', 'one']);

    const ahead = harness.service.prestart({ namespace: harness.ns, conversationId }).catch((error: unknown) => error);
    await harness.app.close();
    await ahead;
    // Closing waited for the CLI being started to end: its run folder with the capability is gone already.
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
    await until(() => clis(harness!).length === 0, 'the CLI started ahead to end with Ward', 10_000);
  });
});
