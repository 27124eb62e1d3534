/**
 * A real stdio MCP server asks the person for input during a tool call (elicitation), through
 * Ward's upstream session, the run's elicitations and the terminal or desktop prompter.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { ApprovalQueue } from '../../main/permissions/approval-queue.js';
import { RunElicitations, type ElicitationJournal } from '../../main/permissions/elicitations.js';
import { noOnePrompter, type Prompter } from '../../main/permissions/prompter.js';
import { terminalPrompter } from '../../main/permissions/terminal-prompter.js';
import { openUpstreams, type Upstreams } from '../../main/upstreams/upstreams.js';
import type { ToolOutcome } from '../../main/upstreams/types.js';
import { ELICITATION_MESSAGE } from '../fixtures/mcp-servers/tools.js';
import { pin, STDIO_FIXTURE } from '../broker/helpers.js';

const open: Upstreams[] = [];
afterEach(async () => {
  for (const upstreams of open.splice(0)) await upstreams.close();
});

interface Journaled {
  readonly events: Array<{ type: string; record: unknown }>;
  readonly journal: ElicitationJournal;
}

function journaled(): Journaled {
  const events: Journaled['events'] = [];
  return {
    events,
    journal: {
      requested: (record) => events.push({ type: 'requested', record }),
      answered: (record) => events.push({ type: 'answered', record }),
      refused: (record) => events.push({ type: 'refused', record }),
    },
  };
}

async function askThrough(prompter: Prompter, form: string, options: { timeoutMs?: number; accepting?: boolean } = {}): Promise<{ outcome: ToolOutcome; events: Journaled['events']; elicitations: RunElicitations }> {
  const { events, journal } = journaled();
  const elicitations = new RunElicitations({
    prompter,
    timeoutMs: options.timeoutMs ?? 10_000,
    agentName: 'helper',
    namespace: 'default',
    conversationId: 'c-1',
    runId: 'r-1',
    journal,
    accepting: () => options.accepting ?? true,
    keepSecret: () => undefined,
  });
  const upstreams = await openUpstreams({ fx: { type: 'stdio', command: process.execPath, args: STDIO_FIXTURE } }, {}, (server) => elicitations.for(server));
  open.push(upstreams);
  const [route] = await pin(upstreams, 'fx', ['ask']);
  const outcome = await upstreams.callTool(route!, { form }, new AbortController().signal);
  return { outcome, events, elicitations };
}

function terminal(answers: string, openUrl?: (url: URL) => Promise<void>) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  // Typed ahead, as a person answering each line does: read one line at a time.
  input.write(answers);
  return { prompter: terminalPrompter(input, output, openUrl === undefined ? {} : { openUrl }), shown: () => shown };
}

describe('elicitation during a tool call', () => {
  it('test_the_form_is_asked_on_the_terminal_empty_answers_take_the_defaults_and_the_answer_goes_to_the_server_journaled_without_the_secret', async () => {
    const { prompter, shown } = terminal('\n\nnope\n2\n\ntok-canary-51c\na\n');
    const { outcome, events } = await askThrough(prompter, 'profile');
    expect(outcome).toMatchObject({ ok: true, content: [{ type: 'text', text: 'accept: age,api_key,name,status,verified' }] });
    expect(shown()).toContain(`Ward: the server fx (agent helper, namespace default) asks for input:\n  ${ELICITATION_MESSAGE}`);
    expect(shown()).toContain('status is not one of the choices; try again');
    expect(events.map((event) => event.type)).toEqual(['requested', 'answered']);
    expect(events[1]!.record).toMatchObject({ server: 'fx', action: 'accept', by: 'person', content: { name: 'John Doe', age: 30, status: 'inactive', verified: true, api_key: '[redacted]' } });
    expect(JSON.stringify(events)).not.toContain('tok-canary-51c');
  });

  it('test_decline_and_cancel_go_back_as_answered_with_no_content', async () => {
    for (const [key, action] of [['d', 'decline'], ['c', 'cancel']] as const) {
      const { prompter } = terminal(`\n\n\n\nx\n${key}\n`);
      const { outcome, events } = await askThrough(prompter, 'profile');
      expect(outcome).toMatchObject({ ok: true, content: [{ type: 'text', text: `${action}: ` }] });
      expect(events[1]!.record).toMatchObject({ action, by: 'person', content: null });
    }
  });

  it('test_no_one_to_ask_no_answer_in_time_or_a_stopping_run_declines_and_is_journaled', async () => {
    expect((await askThrough(noOnePrompter, 'profile')).events[1]!.record).toMatchObject({ action: 'decline', by: 'no_one' });
    const silent = terminal('');
    const timedOut = await askThrough(silent.prompter, 'profile', { timeoutMs: 300 });
    expect(timedOut.outcome).toMatchObject({ ok: true, content: [{ type: 'text', text: 'decline: ' }] });
    expect(timedOut.events[1]!.record).toMatchObject({ action: 'decline', by: 'timeout' });
    expect(silent.shown()).toContain('(no answer in time, or the run ended: declined)');
    const stopping = terminal('a\n');
    expect((await askThrough(stopping.prompter, 'profile', { accepting: false })).events[1]!.record).toMatchObject({ action: 'decline', by: 'ended' });
    expect(stopping.shown()).toBe('');
  });

  it('test_a_request_ward_cannot_show_is_refused_with_the_reason_to_the_server_and_in_the_journal_never_asked', async () => {
    for (const [form, reason] of [
      ['object', 'field "nested" has the unsupported type "object"'],
      ['many', 'the form has 1000 fields, more than 32'],
    ] as const) {
      const { prompter, shown } = terminal('a\n');
      const { outcome, events } = await askThrough(prompter, form);
      expect(outcome).toMatchObject({ ok: false, errorCode: 'upstream_error' });
      expect(events).toEqual([{ type: 'refused', record: { server: 'fx', reason: expect.stringContaining(reason) } }]);
      expect(shown()).toBe('');
    }
  });

  it('test_a_url_request_shows_the_page_and_opens_it_only_after_the_person_confirms', async () => {
    const opened: string[] = [];
    const openUrl = async (url: URL) => void opened.push(url.href);
    const declined = terminal('d\n', openUrl);
    expect((await askThrough(declined.prompter, 'url')).outcome).toMatchObject({ ok: true, content: [{ type: 'text', text: 'decline: ' }] });
    expect(declined.shown()).toContain('asks you to open a page:');
    expect(declined.shown()).toContain('https://example.com/connect?code=once-7f3a');
    expect(opened).toEqual([]);
    const accepted = terminal('o\n', openUrl);
    const { outcome, events } = await askThrough(accepted.prompter, 'url');
    expect(outcome).toMatchObject({ ok: true, content: [{ type: 'text', text: 'accept: ' }] });
    expect(opened).toEqual(['https://example.com/connect?code=once-7f3a']);
    expect(events[1]!.record).toMatchObject({ action: 'accept', content: null });
  });

  it('test_the_desktop_shows_it_with_the_approvals_checks_the_form_and_keeps_it_open_until_it_fits', async () => {
    const queue = new ApprovalQueue(10_000);
    const ns = parseNamespace('default');
    const changed = new Promise<void>((resolve) => queue.onChange(() => resolve()));
    const asking = askThrough(queue, 'profile');
    await changed;
    const [view] = queue.elicitations(ns);
    expect(view).toMatchObject({ server: 'fx', agent: 'helper', conversationId: 'c-1', runId: 'r-1', mode: 'form', message: ELICITATION_MESSAGE, url: null });
    expect(view!.fields.map((field) => [field.name, field.kind, field.default, field.sensitive])).toEqual([
      ['name', 'string', 'John Doe', false],
      ['age', 'integer', 30, false],
      ['status', 'enum', 'active', false],
      ['verified', 'boolean', true, false],
      ['api_key', 'string', null, true],
    ]);
    expect(() => queue.answerElicitation(ns, view!.id, 'accept', { age: 'old' })).toThrow(/Age is not a number/);
    expect(() => queue.answerElicitation(ns, view!.id, 'accept', {})).toThrow(/API key is required/);
    expect(queue.elicitations(ns)).toHaveLength(1);
    expect(queue.answerElicitation(ns, view!.id, 'accept', { api_key: 'tok-canary-desktop' })).toBeNull();
    const { outcome, events } = await asking;
    expect(outcome).toMatchObject({ ok: true, content: [{ type: 'text', text: 'accept: age,api_key,name,status,verified' }] });
    expect(queue.elicitations(ns)).toEqual([]);
    expect(JSON.stringify(events)).not.toContain('tok-canary-desktop');
  });
});
