/**
 * Permissions end to end: the real pinned CLI, driven by the scripted model provider, asking
 * Ward over its control channel (`can_use_tool`) and calling MCP tools through the real broker; decisions read back from the journal.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isWardError } from '../../main/base/errors.js';
import type { AuditRecord } from '../../main/permissions/audit.js';
import { GrantStore } from '../../main/permissions/grant-store.js';
import { parsePermissionFlags } from '../../main/permissions/grants.js';
import type { Prompter } from '../../main/permissions/prompter.js';
import { parsePolicy } from '../../main/policy/policy.js';
import { toolResultsSeen, type ScriptStep } from '../fixtures/model-provider/provider.js';
import { publishToolAgent } from '../app/runs/agents.js';
import { closeHarnessesAfterEach, payloads, startHarness, type Harness } from '../app/runs/harness.js';
import { tempDir } from '../support/temp.js';
import { scriptedPerson, silentPerson } from '../support/people.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

const INSIDE = 'inside-canary-5d1e';
const OUTSIDE = 'outside-canary-9b2f';
const WORKSPACE = 'workspace-canary-77aa';

function project() {
  const root = fs.realpathSync(tempDir('ward-perm-e2e-'));
  const base = path.join(root, 'project');
  const outside = path.join(root, 'outside');
  const workspace = path.join(root, 'workspace');
  fs.mkdirSync(path.join(base, 'src', 'secrets'), { recursive: true });
  fs.mkdirSync(outside);
  fs.mkdirSync(workspace);
  fs.writeFileSync(path.join(base, 'src', 'a.txt'), INSIDE);
  fs.writeFileSync(path.join(outside, 'secret.txt'), OUTSIDE);
  fs.writeFileSync(path.join(workspace, 'ws.txt'), WORKSPACE);
  fs.symlinkSync(outside, path.join(base, 'src', 'link'));
  return { base, outside, workspace };
}

function tool(name: string, input: Record<string, unknown>): ScriptStep {
  return { blocks: [{ type: 'tool_use', name, input }] };
}
const DONE: ScriptStep = { blocks: [{ type: 'text', text: 'done' }] };

describe('permissions with the real CLI', () => {
  it('test_read_inside_is_allowed_outside_symlink_dotdot_and_ungranted_workspace_are_denied', async () => {
    const { base, outside, workspace } = project();
    harness = await startHarness([
      tool('Read', { file_path: path.join(base, 'src', 'a.txt') }),
      tool('Read', { file_path: path.join(outside, 'secret.txt') }),
      tool('Read', { file_path: path.join(base, 'src', 'link', 'secret.txt') }),
      tool('Read', { file_path: `${base}/src/../../outside/secret.txt` }),
      tool('Read', { file_path: path.join(workspace, 'ws.txt') }),
      tool('Grep', { pattern: 'canary', path: workspace }),
      DONE,
    ]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'read', permissions: parsePermissionFlags(['--allow-read=./src'], base), workspace });
    expect((await handle.done).state).toBe('succeeded');

    const seen = toolResultsSeen(harness.provider);
    expect(seen[0]!.text).toContain(INSIDE);
    for (const denied of seen.slice(1, 6)) {
      expect(denied.isError).toBe(true);
      expect(denied.text).toContain('Ward denied');
    }
    const everything = JSON.stringify(harness.provider.requests.map((request) => request.rawBody));
    expect(everything).not.toContain(OUTSIDE);
    expect(everything).not.toContain(WORKSPACE);

    // Every native call was decided by Ward and journaled: one decision per tool call.
    const events = harness.events(handle.conversationId);
    const decisions = payloads<AuditRecord>(events, 'permission_decision');
    expect(decisions).toHaveLength(payloads(events, 'tool_call').length);
    expect(decisions.map((decision) => decision.decision)).toEqual(['allow', 'deny', 'deny', 'deny', 'deny', 'deny']);
    expect(decisions[0]).toMatchObject({ tool: 'Read', kind: 'read', answerer: { by: 'rule' } });
    expect(decisions[2]).toMatchObject({ value: path.join(outside, 'secret.txt'), answerer: { by: 'no_one' } });
  });

  it('test_write_to_a_denied_sub_path_is_denied_although_the_parent_is_allowed', async () => {
    const { base, workspace } = project();
    harness = await startHarness([
      tool('Write', { file_path: path.join(base, 'src', 'secrets', 'key.pem'), content: 'nope' }),
      tool('Write', { file_path: path.join(base, 'src', 'ok.txt'), content: 'fine' }),
      DONE,
    ]);
    const permissions = parsePermissionFlags(['--allow-read=./src', '--allow-write=./src', '--deny-write=./src/secrets'], base);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'write', permissions, workspace });
    expect((await handle.done).state).toBe('succeeded');
    expect(fs.existsSync(path.join(base, 'src', 'secrets', 'key.pem'))).toBe(false);
    expect(fs.readFileSync(path.join(base, 'src', 'ok.txt'), 'utf8')).toBe('fine');
    const decisions = payloads<AuditRecord>(harness.events(handle.conversationId), 'permission_decision');
    expect(decisions.map((decision) => `${decision.decision} ${decision.answerer.by}`)).toEqual(['deny rule', 'allow rule']);
    expect(decisions[0]!.reason).toContain(`denied by deny write ${path.join(base, 'src', 'secrets')}`);
  });

  it('test_bash_with_a_granted_command_runs_and_ungranted_or_compound_commands_are_denied', async () => {
    const { base, workspace } = project();
    const marker = path.join(workspace, 'touched');
    harness = await startHarness([
      tool('Bash', { command: 'echo granted-echo-31', description: 'echo' }),
      tool('Bash', { command: `touch ${marker}`, description: 'touch' }),
      tool('Bash', { command: `echo hi; touch ${marker}`, description: 'compound' }),
      DONE,
    ]);
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'bash', permissions: parsePermissionFlags(['--allow-run=echo'], base), workspace });
    expect((await handle.done).state).toBe('succeeded');
    const seen = toolResultsSeen(harness.provider);
    expect(seen[0]!.text).toContain('granted-echo-31');
    expect(seen[1]!.isError).toBe(true);
    expect(seen[2]!.isError).toBe(true);
    expect(fs.existsSync(marker)).toBe(false);
    const decisions = payloads<AuditRecord>(harness.events(handle.conversationId), 'permission_decision');
    expect(decisions.map((decision) => `${decision.value} ${decision.decision}`)).toEqual(['echo allow', 'touch deny', 'echo deny']);
  });

  it('test_approval_once_is_asked_again_and_for_this_conversation_is_not_until_a_new_conversation', async () => {
    const { base, outside, workspace } = project();
    const secret = path.join(outside, 'secret.txt');
    const person = scriptedPerson('once', 'once', 'conversation', 'deny');
    harness = await startHarness([tool('Read', { file_path: secret }), tool('Read', { file_path: secret }), DONE], { prompter: person });
    const permissions = parsePermissionFlags(['--allow-read=./src'], base);
    const first = harness.service.startTurn({ namespace: harness.ns, prompt: 'once', permissions, workspace });
    expect((await first.done).state).toBe('succeeded');
    expect(person.questions).toHaveLength(2);
    expect(person.questions[0]).toMatchObject({ tool: 'Read', kind: 'read', value: secret });

    // "For this conversation": asked once, then a later turn of the same conversation is not asked.
    harness.provider.push(tool('Read', { file_path: secret }), tool('Read', { file_path: secret }), DONE);
    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'again', permissions });
    expect((await second.done).state).toBe('succeeded');
    expect(person.questions).toHaveLength(3);
    harness.provider.push(tool('Read', { file_path: secret }), DONE);
    const third = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'and again', permissions });
    expect((await third.done).state).toBe('succeeded');
    expect(person.questions).toHaveLength(3);

    // A new conversation is asked again (and this time the person says no).
    harness.provider.push(tool('Read', { file_path: secret }), DONE);
    const fresh = harness.service.startTurn({ namespace: harness.ns, prompt: 'new chat', permissions, workspace: tempDir() });
    expect((await fresh.done).state).toBe('succeeded');
    expect(person.questions).toHaveLength(4);
    expect(toolResultsSeen(harness.provider).at(-1)!.isError).toBe(true);
  });

  it('test_no_answer_in_time_is_a_deny', async () => {
    const { base, outside, workspace } = project();
    harness = await startHarness([tool('Read', { file_path: path.join(outside, 'secret.txt') }), DONE], { prompter: silentPerson, promptTimeoutMs: 300 });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'wait', permissions: parsePermissionFlags(['--allow-read=./src'], base), workspace });
    expect((await handle.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider)[0]).toMatchObject({ isError: true, text: expect.stringContaining('no answer within') });
    expect(payloads<AuditRecord>(harness.events(handle.conversationId), 'permission_decision')[0]).toMatchObject({ decision: 'deny', answerer: { by: 'timeout' } });
  });

  it('test_stopping_a_run_withdraws_its_open_question', async () => {
    const { base, outside, workspace } = project();
    let asked: AbortSignal | undefined;
    const waiting: Prompter = {
      interactive: true,
      ask: (_question, signal) => {
        asked = signal;
        return new Promise(() => undefined);
      },
    };
    harness = await startHarness([tool('Read', { file_path: path.join(outside, 'secret.txt') }), DONE], { prompter: waiting });
    const handle = harness.service.startTurn({ namespace: harness.ns, prompt: 'wait', permissions: parsePermissionFlags(['--allow-read=./src'], base), workspace });
    const deadline = Date.now() + 20_000;
    while (asked === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(asked?.aborted).toBe(false);
    expect((await harness.service.stop(handle.runId)).state).toBe('stopped');
    expect(asked?.aborted).toBe(true);
  });

  it('test_mcp_tool_granted_then_revoked_is_denied_on_the_next_call', async () => {
    harness = await startHarness([tool('mcp__ward__fixture__echo', { text: 'first-call-11' }), DONE]);
    await publishToolAgent(harness);
    // Pinning a tool in the agent version grants it to that agent.
    const first = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'echo' });
    expect((await first.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider).at(-1)!.text).toContain('first-call-11');

    // The person takes it back for this conversation; the broker sees it on the next call.
    const grants = new GrantStore(harness.core.store(harness.ns).db);
    const deny = grants.add({ scope: 'conversation', conversationId: first.conversationId, effect: 'deny', kind: 'mcp', value: 'fixture/echo', grantedBy: 'cli' });
    harness.provider.push(tool('mcp__ward__fixture__echo', { text: 'second-call-22' }), DONE);
    const second = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'echo again' });
    expect((await second.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider).at(-1)).toMatchObject({ isError: true });
    expect(toolResultsSeen(harness.provider).at(-1)!.text).not.toContain('second-call-22');

    // Revoking the deny gives it back, again from the next call on.
    grants.revoke(deny.id);
    harness.provider.push(tool('mcp__ward__fixture__echo', { text: 'third-call-33' }), DONE);
    const third = harness.service.startTurn({ namespace: harness.ns, conversationId: first.conversationId, prompt: 'and again' });
    expect((await third.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider).at(-1)!.text).toContain('third-call-33');

    const decisions = payloads<AuditRecord>(harness.events(first.conversationId), 'permission_decision');
    expect(decisions.map((decision) => `${decision.via} ${decision.value} ${decision.decision}`)).toEqual([
      'broker fixture/echo allow',
      'broker fixture/echo deny',
      'broker fixture/echo allow',
    ]);
    expect(decisions[0]!.reason).toBe('allowed by allow mcp fixture/echo (agent)');
  });

  it('test_a_deny_added_mid_turn_refuses_the_next_mcp_call', async () => {
    // Two calls in one turn; the grant is revoked while the first call is running.
    harness = await startHarness([
      tool('mcp__ward__fixture__slow', { ms: 1500 }),
      tool('mcp__ward__fixture__echo', { text: 'after-revoke-44' }),
      DONE,
    ]);
    await publishToolAgent(harness);
    const grants = new GrantStore(harness.core.store(harness.ns).db);
    const handle = harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'slow then echo' });
    // Deny echo while slow is still running: the very next call is refused.
    const started = Date.now();
    while (!harness.events(handle.conversationId).some((event) => event.type === 'tool_call') && Date.now() - started < 20_000) await new Promise((resolve) => setTimeout(resolve, 20));
    grants.add({ scope: 'conversation', conversationId: handle.conversationId, effect: 'deny', kind: 'mcp', value: 'fixture/echo', grantedBy: 'cli' });
    expect((await handle.done).state).toBe('succeeded');
    expect(toolResultsSeen(harness.provider).map((result) => result.isError)).toEqual([false, true]);
    const decisions = payloads<AuditRecord>(harness.events(handle.conversationId), 'permission_decision');
    expect(decisions.map((decision) => `${decision.value} ${decision.decision}`)).toEqual(['fixture/slow allow', 'fixture/echo deny']);
  });

  it('test_a_policy_cap_refuses_a_user_grant', async () => {
    const { base } = project();
    const policy = parsePolicy(JSON.stringify({ version: 1, reason: 'Example Corp IT', caps: { read: ['/srv/approved'] } }), 'policy.json');
    harness = await startHarness([DONE], { policy });
    let refused: unknown;
    try {
      harness.service.startTurn({ namespace: harness.ns, prompt: 'x', permissions: parsePermissionFlags(['--allow-read=./src'], base) });
    } catch (error) {
      refused = error;
    }
    expect(isWardError(refused, 'policy_refused')).toBe(true);
    expect((refused as Error).message).toBe(`read ${path.join(base, 'src')} is beyond the allowed read cap (/srv/approved): refused by Example Corp IT`);
    expect(harness.provider.requests).toEqual([]);
  });

  it('test_the_policy_pins_provider_cli_version_connections_and_namespace', async () => {
    const policy = (fields: Record<string, unknown>) => parsePolicy(JSON.stringify({ version: 1, reason: 'Example Corp IT', ...fields }), 'policy.json');
    harness = await startHarness([DONE, DONE], { policy: policy({ providers: ['api.anthropic.com'] }) });
    const provider = await harness.service.startTurn({ namespace: harness.ns, prompt: 'x' }).done;
    expect(provider).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^model provider 127\.0\.0\.1:\d+ is not allowed: refused by Example Corp IT$/) });
    await harness.close();

    harness = await startHarness([DONE], { policy: policy({ cliVersions: ['9.9.9'] }) });
    expect(await harness.service.startTurn({ namespace: harness.ns, prompt: 'x' }).done).toMatchObject({ state: 'failed', reason: expect.stringMatching(/is not allowed \(the policy allows 9\.9\.9; .*\): refused by Example Corp IT$/) });
    await harness.close();

    // Servers are matched by what they are (URL, or command and arguments), not by name.
    harness = await startHarness([DONE], { policy: policy({ allowedConnections: ['https://mcp.github.example/*'] }) });
    await publishToolAgent(harness);
    expect(await harness.service.startTurn({ namespace: harness.ns, agent: 'tooly', prompt: 'x' }).done).toMatchObject({
      state: 'failed',
      reason: expect.stringMatching(/^connection "fixture" \(".*stdio\.ts.*"\) is not allowed: it matches no allowedConnections entry: refused by Example Corp IT$/),
    });
    await harness.close();

    harness = await startHarness([DONE], { policy: policy({ models: ['claude-opus-*'] }) });
    expect(await harness.service.startTurn({ namespace: harness.ns, prompt: 'x' }).done).toMatchObject({ state: 'failed', reason: expect.stringMatching(/^model ".*" is not allowed \(allowed: claude-opus-\*\): refused by Example Corp IT$/) });
    await harness.close();

    harness = await startHarness([DONE], { policy: policy({ namespace: 'work' }) });
    expect(() => harness!.service.startTurn({ namespace: harness!.ns, prompt: 'x' })).toThrow('namespace default: refused by Example Corp IT, which fixes the namespace to work');
    expect(harness.provider.requests).toEqual([]);
  });
});
