import fs from 'node:fs';
import path from 'node:path';
import { parsePermissionFlags } from '../../../main/permissions/grants.js';
import { describe, expect, it } from 'vitest';
import { isWardError } from '../../../main/base/errors.js';
import type { RunState } from '../../../main/store/runs.js';
import { processesWith, publishToolAgent } from './agents.js';
import { closeHarnessesAfterEach, payloads, processGroupAlive, startHarness, types, type Harness } from './harness.js';
import { until } from '../../support/wait.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

function callLog(harness: Harness): string {
  const file = harness.env.FIXTURE_CALL_LOG!;
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
}

describe('Stop (R6)', () => {
  it('test_stops_during_a_slow_tool_call_running_stopping_stopped_refusing_a_new_prompt_until_drained_leaving_no_process_behind', async () => {
    const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'ward-calllog-'));
    harness = await startHarness(
      [{ blocks: [{ type: 'text', text: 'Working on it.' }, { type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 4_000 } }] }, { blocks: [{ type: 'text', text: 'unused' }] }],
      { env: { FIXTURE_CALL_LOG: path.join(tmp, 'calls.log') } },
    );
    const agent = await publishToolAgent(harness);
    const store = harness.core.store(harness.ns);
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'do the slow thing' });
    const states: RunState[] = [];
    const record = () => {
      const state = store.runs.get(handle.runId).state;
      if (states.at(-1) !== state) states.push(state);
    };
    await until(() => {
      record();
      return callLog(harness!).includes('slow');
    }, 'the slow call to reach the upstream');
    const childPid = handle.childPid()!;
    expect(processesWith(agent.marker).length).toBeGreaterThan(0);

    const stopping = harness.service.stop(handle.runId);
    record();
    // While stopping, the conversation is still reserved: a new prompt is refused.
    let refused: unknown;
    try {
      harness.service.startTurn({ namespace: harness.ns, conversationId: handle.conversationId, prompt: 'another one' });
    } catch (error) {
      refused = error;
    }
    expect(isWardError(refused, 'conversation_busy')).toBe(true);
    expect((refused as Error).message).toContain('stopping');

    const outcome = await stopping;
    record();
    expect(outcome).toMatchObject({ state: 'stopped', reason: 'stopped by the user' });
    expect(states).toEqual(['admitted', 'running', 'stopping', 'stopped']);

    const events = harness.events(handle.conversationId);
    // The CLI reports usage for the interrupted turn when it exits gracefully; not part of the point here.
    // tool_drained appears when the upstream call ended after the CLI had printed its own result.
    expect(types(events).filter((type) => !['usage', 'permission_decision', 'tool_drained', 'assistant_delta'].includes(type))).toEqual([
      'run_started',
      'user_prompt',
      'assistant_text',
      'tool_call',
      'run_stopping',
      'tool_result',
      'run_finished',
    ]);
    const result = payloads(events, 'tool_result')[0]!;
    expect(result).toMatchObject({ tool: 'fixture__slow', ok: false });
    // B7: the broker's own outcome of the slow call (cancelled, or completed later) is in the
    // journal before run_finished: the run was released only after the call drained.
    const drained = payloads(events, 'tool_drained');
    // The CLI asked for it and stopped waiting: never mistaken for a call from elsewhere (issue 12 #14).
    for (const call of drained) expect(call.cause).toBe('cli_stopped_waiting');
    const brokerOutcome = drained.length > 0 ? drained[0]! : result;
    expect(brokerOutcome).toMatchObject({ tool: 'fixture__slow', errorCode: expect.not.stringMatching(/^tool_error$/) });
    expect(types(events).at(-1)).toBe('run_finished');
    expect(payloads(events, 'run_finished')[0]).toMatchObject({ state: 'stopped', reason: 'stopped by the user' });
    // Nothing Ward started for the run is left: the CLI's group, the upstream server, the run folder.
    expect(processGroupAlive(childPid)).toBe(false);
    expect(processesWith(agent.marker)).toEqual([]);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
    // The conversation is free again.
    harness.provider.push({ blocks: [{ type: 'text', text: 'Back again.' }] });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('test_a_stop_cancels_the_upstream_call_in_flight_itself_when_the_cli_is_killed_before_it_can_and_ends_without_waiting_it_out', async () => {
    const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'ward-calllog-'));
    // A call that would run for two minutes, well past this test's own time limit.
    harness = await startHarness([{ blocks: [{ type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 120_000 } }] }], {
      env: { FIXTURE_CALL_LOG: path.join(tmp, 'calls.log') },
      stopGraceMs: 60_000,
    });
    await publishToolAgent(harness);
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'do the slow thing' });
    await until(() => callLog(harness!).includes('slow'), 'the slow call to reach the upstream');
    // Stop, and stop again at once: the CLI is SIGKILLed before it can cancel anything, so only
    // Ward's own cancellation can end the upstream call (whether the CLI cancels is a race).
    void harness.service.stop(handle.runId);
    const outcome = await harness.service.stop(handle.runId);
    expect(outcome).toMatchObject({ state: 'stopped', reason: 'stopped by the user' });
    // The server heard the cancellation (notifications/cancelled) and stopped working on the call.
    expect(callLog(harness).split('\n')).toContain('cancelled slow');
    const events = harness.events(handle.conversationId);
    const brokerOutcome = [...payloads(events, 'tool_drained'), ...payloads(events, 'tool_result')].find((call) => call.tool === 'fixture__slow');
    expect(brokerOutcome).toMatchObject({ ok: false, errorCode: 'cancelled' });
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('test_a_second_stop_escalates_to_killing_the_process_group_at_once', async () => {
    harness = await startHarness([{ kind: 'hang' }], { stopGraceMs: 60_000 });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hang please' });
    await until(() => harness!.provider.conversationRequests().length === 1, 'the model call');
    const childPid = handle.childPid()!;
    void harness.service.stop(handle.runId);
    const outcome = await harness.service.stop(handle.runId);
    expect(outcome.state).toBe('stopped');
    expect(processGroupAlive(childPid)).toBe(false);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
  });
});

describe('bounded waits', () => {
  it('test_a_turn_that_exceeds_its_time_limit_is_interrupted_and_fails_with_the_reason', async () => {
    harness = await startHarness([{ kind: 'hang' }], { turnTimeoutMs: 2_000 });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hang please' });
    const outcome = await handle.done;
    expect(outcome).toMatchObject({ state: 'failed', reason: 'aborted: the turn exceeded 2 s (turnTimeoutMinutes in settings.json sets this bound)' });
    expect(processGroupAlive(handle.childPid()!)).toBe(false);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
  });

  it('test_a_provider_that_hangs_stops_the_turn_after_the_idle_bound_with_the_reason_long_before_the_turn_limit', async () => {
    // Issue 12 #13: a hanging provider left `ward run` silent for 30 minutes.
    harness = await startHarness([{ kind: 'hang' }], { idleTimeoutMs: 2_000 });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hang please' });
    const outcome = await handle.done;
    expect(outcome.state).toBe('failed');
    expect(outcome.reason).toMatch(/^aborted: the CLI sent nothing for 2 s while no tool ran \(the model provider may be hanging; idleTimeoutMinutes in settings.json sets this bound\)/);
    expect(processGroupAlive(handle.childPid()!)).toBe(false);
  });

  it('test_a_tool_that_runs_longer_than_the_idle_bound_is_not_cut_short', async () => {
    // The bound leaves the CLI time to start on a loaded machine (its start counts as silence; 6 s
    // left too little margin at load 15); the tool runs well past it.
    harness = await startHarness([{ blocks: [{ type: 'tool_use', name: 'Bash', input: { command: 'sleep 18', description: 'wait' } }] }, { blocks: [{ type: 'text', text: 'waited' }] }], { idleTimeoutMs: 10_000 });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'wait', permissions: parsePermissionFlags(['--allow-run=sleep'], harness.home) });
    expect(await handle.done).toEqual(expect.objectContaining({ state: 'succeeded', reason: null }));
  });

  it('test_turn_limits_come_from_settings_json_and_a_bad_value_fails_the_turn_naming_file_and_key_before_the_cli_starts', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'never' }] }]);
    fs.writeFileSync(path.join(harness.home, 'settings.json'), JSON.stringify({ idleTimeoutMinutes: 0 }));
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hi' });
    const outcome = await handle.done;
    expect(outcome.state).toBe('failed');
    expect(outcome.reason).toContain(`${path.join(harness.home, 'settings.json')}: "idleTimeoutMinutes" must be a whole number of minutes from 1 to 240`);
    expect(handle.childPid()).toBeUndefined();
    expect(harness.provider.requests).toEqual([]);
  });
});

describe('a child that dies mid-turn', () => {
  it('test_sigkilled_while_streaming_text_failed_never_succeeded_run_folder_gone', async () => {
    harness = await startHarness([{ kind: 'hang' }]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'hang please' });
    await until(() => harness!.provider.conversationRequests().length === 1, 'the model call');
    const childPid = handle.childPid()!;
    expect(fs.readdirSync(harness.tmpRoot)).toHaveLength(1);
    process.kill(childPid, 'SIGKILL');
    const outcome = await handle.done;
    expect(outcome.state).toBe('failed');
    expect(outcome.reason).toContain('killed by SIGKILL without a result');
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
    expect(processGroupAlive(childPid)).toBe(false);
    expect(harness.core.store(harness.ns).runs.activeFor(handle.conversationId)).toBeUndefined();
  });

  it('test_sigkilled_while_a_tool_call_is_in_flight_uncertain_and_the_reservation_is_kept', async () => {
    const tmp = fs.mkdtempSync(path.join(process.env.TMPDIR ?? '/tmp', 'ward-calllog-'));
    harness = await startHarness([{ blocks: [{ type: 'tool_use', name: 'mcp__ward__fixture__slow', input: { ms: 1_500 } }] }], {
      env: { FIXTURE_CALL_LOG: path.join(tmp, 'calls.log') },
    });
    const agent = await publishToolAgent(harness);
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'slow' });
    await until(() => callLog(harness!).includes('slow'), 'the slow call to reach the upstream');
    process.kill(handle.childPid()!, 'SIGKILL');
    const outcome = await handle.done;
    expect(outcome.state).toBe('uncertain');
    expect(outcome.reason).toMatch(/1 tool call\(s\) were in flight/);
    expect(harness.core.store(harness.ns).runs.activeFor(handle.conversationId)?.state).toBe('uncertain');
    // The call completed upstream after the CLI died: journaled, but never delivered to the model.
    expect(payloads(harness.events(handle.conversationId), 'tool_result')).toEqual([expect.objectContaining({ tool: 'fixture__slow', ok: true, delivered: false })]);
    expect(fs.readdirSync(harness.tmpRoot)).toEqual([]);
    expect(processesWith(agent.marker)).toEqual([]);
    fs.rmSync(tmp, { recursive: true, force: true });
  });
});
