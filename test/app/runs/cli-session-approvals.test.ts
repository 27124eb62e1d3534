/**
 * The CLI's permission questions (`--permission-prompt-tool stdio`): `can_use_tool` control
 * requests on its stdout, answered by the turn bound to the session, as control responses on its
 * stdin (P3). A real child process over real pipes plays the CLI's side: it writes the requests it
 * is given and records every line it reads. The real CLI asking real turns is in
 * test/permissions/real-cli.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CliSession, type TurnHooks } from '../../../main/app/runs/cli-session.js';
import type { ApprovalDecision, ApprovalRequest } from '../../../main/permissions/approval.js';
import type { CliMessage } from '../../../main/runner/stream-parser.js';
import { tempDir } from '../../support/temp.js';

/** Writes REQUESTS (one JSON line each) on stdout, appends every stdin line to ANSWERS, lives until stdin closes. */
const FAKE_CLI = `
  const fs = require('node:fs');
  for (const request of JSON.parse(process.env.REQUESTS)) process.stdout.write(JSON.stringify(request) + '\\n');
  require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => fs.appendFileSync(process.env.ANSWERS, line + '\\n'));
`;

const question = (id: string, request: Record<string, unknown>) => ({ type: 'control_request', request_id: id, request: { subtype: 'can_use_tool', ...request } });

/** The turn's side: only what a permission question needs (the rest of TurnHooks is never called here). */
function turn(approve: (request: ApprovalRequest) => Promise<ApprovalDecision>, seen: CliMessage[] = [], accepting = () => true): TurnHooks {
  return { accepting, approve, onMessages: (messages: readonly CliMessage[]) => seen.push(...messages) } as unknown as TurnHooks;
}

function start(requests: readonly unknown[], hooks: TurnHooks | null, approvalLimitMs?: number) {
  const answers = path.join(tempDir('ward-approvals-'), 'answers');
  const session = new CliSession('fingerprint', 'run-1', ...(approvalLimitMs === undefined ? [] : [approvalLimitMs]));
  if (hooks !== null) session.bind(hooks, 'run-1');
  const child = session.spawn({ binary: process.execPath, args: ['-e', FAKE_CLI], env: { PATH: process.env.PATH ?? '', REQUESTS: JSON.stringify(requests), ANSWERS: answers }, cwd: process.cwd() });
  onTestFinished(() => session.close());
  /** The control responses the CLI has read, once there are `count` of them (bounded wait). */
  const read = async (count: number): Promise<Array<{ request_id: string; response: Record<string, unknown> }>> => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const lines = fs.existsSync(answers) ? fs.readFileSync(answers, 'utf8').split('\n').filter((line) => line !== '') : [];
      if (lines.length >= count) return lines.map((line) => (JSON.parse(line) as { type: string; response: { request_id: string; response: Record<string, unknown> } }).response);
      if (Date.now() > deadline) throw new Error(`the fake CLI read ${lines.length} answers, waited for ${count}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  return { session, child, read };
}

describe("a warm or one-turn CLI's permission questions (control channel)", () => {
  it('test_each_question_goes_to_the_bound_turn_with_its_tool_input_and_tool_use_id_and_its_answer_comes_back_on_stdin', async () => {
    const asked: ApprovalRequest[] = [];
    const seen: CliMessage[] = [];
    const hooks = turn(async (request) => {
      asked.push(request);
      return request.toolName === 'Read' ? { behavior: 'allow', updatedInput: request.input } : { behavior: 'deny', message: 'not granted' };
    }, seen);
    const { read } = start(
      [
        question('q-1', { tool_name: 'Read', input: { file_path: '/tmp/a' }, tool_use_id: 'toolu_1' }),
        question('q-2', { tool_name: 'Bash', input: { command: 'ls' } }),
        { type: 'assistant', message: { content: [{ type: 'text', text: 'the rest goes to the turn' }] } },
      ],
      hooks,
    );
    const answers = await read(2);
    expect(answers.sort((a, b) => a.request_id.localeCompare(b.request_id))).toEqual([
      { subtype: 'success', request_id: 'q-1', response: { behavior: 'allow', updatedInput: { file_path: '/tmp/a' } } },
      { subtype: 'success', request_id: 'q-2', response: { behavior: 'deny', message: 'not granted' } },
    ]);
    expect(asked).toEqual([
      { toolName: 'Read', input: { file_path: '/tmp/a' }, toolUseId: 'toolu_1' },
      { toolName: 'Bash', input: { command: 'ls' }, toolUseId: null },
    ]);
    // The questions are answered here; the turn's stream sees the CLI's other lines only.
    expect(seen.map((message) => message.kind)).toEqual(['assistant_text']);
  });

  it('test_with_no_turn_accepting_calls_or_a_malformed_question_the_answer_is_deny_and_no_one_is_asked', async () => {
    let asked = 0;
    const approve = async (request: ApprovalRequest): Promise<ApprovalDecision> => {
      asked += 1;
      return { behavior: 'allow', updatedInput: request.input };
    };
    const stopping = start([question('q-1', { tool_name: 'Bash', input: { command: 'ls' } })], turn(approve, [], () => false));
    expect(await stopping.read(1)).toEqual([{ subtype: 'success', request_id: 'q-1', response: { behavior: 'deny', message: 'The run is not accepting tool calls.' } }]);
    const between = start([question('q-2', { tool_name: 'Bash', input: { command: 'ls' } })], null);
    expect(await between.read(1)).toEqual([{ subtype: 'success', request_id: 'q-2', response: { behavior: 'deny', message: 'The run is not accepting tool calls.' } }]);
    const malformed = start([question('q-3', { tool_name: 'Bash', input: 'rm -rf /' })], turn(approve));
    expect(await malformed.read(1)).toEqual([{ subtype: 'success', request_id: 'q-3', response: { behavior: 'deny', message: 'Malformed permission request.' } }]);
    expect(asked).toBe(0);
  });

  it('test_a_question_nobody_answers_is_denied_at_the_bound_never_allowed_p3', async () => {
    const { read } = start([question('q-1', { tool_name: 'Bash', input: { command: 'rm -rf /' } })], turn(() => new Promise(() => undefined)), 300);
    expect(await read(1)).toEqual([{ subtype: 'success', request_id: 'q-1', response: { behavior: 'deny', message: 'No answer in time.' } }]);
  });

  it('test_a_question_the_cli_withdraws_or_one_open_when_the_session_closes_is_denied', async () => {
    /** An approver that never answers, and a promise kept once it was asked. */
    const silent = () => {
      let asked!: () => void;
      const wasAsked = new Promise<void>((resolve) => (asked = resolve));
      const approve = () => {
        asked();
        return new Promise<ApprovalDecision>(() => undefined);
      };
      return { approve, wasAsked };
    };
    const first = silent();
    const withdrawn = start([question('q-1', { tool_name: 'Bash', input: { command: 'ls' } }), { type: 'control_cancel_request', request_id: 'q-1' }], turn(first.approve));
    expect(await withdrawn.read(1)).toEqual([{ subtype: 'success', request_id: 'q-1', response: { behavior: 'deny', message: 'The CLI stopped waiting for the answer.' } }]);

    const second = silent();
    const closing = start([question('q-2', { tool_name: 'Bash', input: { command: 'ls' } })], turn(second.approve));
    await second.wasAsked;
    void closing.session.close(2_000);
    expect(await closing.read(1)).toEqual([{ subtype: 'success', request_id: 'q-2', response: { behavior: 'deny', message: 'The run ended.' } }]);
  });
});
