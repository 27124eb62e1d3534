// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { describeTotal } from '../../common/usage.js';
import { Markdown, markdownPieces } from '../../renderer/src/components/Markdown.js';
import { ToolCallEntry } from '../../renderer/src/components/Timeline.js';
import { applyEvents } from '../../renderer/src/state/apply-events.js';
import { readIncomingEvents, type ArrivingEvent } from '../../renderer/src/state/incoming-events.js';
import { plainPreview } from '../../renderer/src/state/plain-preview.js';
import { EMPTY_CONVERSATION, type TimelineItem } from '../../renderer/src/state/timeline.js';
import { RUN_STARTED, viewFeed } from '../support/events.js';
import { click, render } from './render.js';

describe('the timeline follows the journal (J1)', () => {
  it('test_pairs_a_tool_call_with_its_result_with_the_duration_main_measured', () => {
    const event = viewFeed();
    const state = applyEvents(EMPTY_CONVERSATION, [
      event('run_started', RUN_STARTED),
      event('user_prompt', { text: 'look it up' }),
      event('tool_call', { toolUseId: 't1', tool: 'lookup', arguments: { q: 'ward' } }, '2026-03-01T12:00:01.000Z'),
      event('tool_call', { toolUseId: 't2', tool: 'fetch', arguments: { url: 'https://example.com' } }, '2026-03-01T12:00:01.000Z'),
      event('tool_result', { toolUseId: 't2', tool: 'fetch', ok: false, bytes: 0, durationMs: 15, errorCode: 'unreachable', preview: '', previewTruncated: false }, '2026-03-01T12:00:02.000Z'),
      event('tool_result', { toolUseId: 't1', tool: 'lookup', ok: true, bytes: 120, durationMs: 2_400, errorCode: null, preview: '', previewTruncated: false }, '2026-03-01T12:00:04.000Z'),
    ]);
    const tools = state.items.filter((item): item is Extract<TimelineItem, { kind: 'tool' }> => item.kind === 'tool');
    expect(tools.map((tool) => [tool.tool, tool.status, tool.durationMs, tool.output])).toEqual([
      ['lookup', 'ok', 2_400, '120 bytes returned to the model'],
      ['fetch', 'error', 15, 'unreachable'],
    ]);
    expect(state.run).toEqual({ id: 'run-1', state: 'running', reason: null });
    expect(state.lastSeq).toBe(6);
  });

  it('test_a_servers_request_for_input_shows_as_how_it_was_answered_and_a_refused_one_with_why_never_the_values', () => {
    const event = viewFeed();
    const state = applyEvents(EMPTY_CONVERSATION, [
      event('run_started', RUN_STARTED),
      event('elicitation_requested', { elicitationId: 'e1', server: 'tracker', mode: 'form', message: 'Who?', fields: [{ name: 'pin', kind: 'string', required: true, sensitive: true }], urlOrigin: null }),
      event('elicitation_answered', { elicitationId: 'e1', server: 'tracker', action: 'accept', by: 'person', content: { pin: '[redacted]' } }),
      event('elicitation_answered', { elicitationId: 'e2', server: 'tracker', action: 'decline', by: 'timeout', content: null }),
      event('elicitation_refused', { server: 'tracker', reason: 'the form has 1000 fields, more than 32' }),
    ]);
    expect(state.items.map((item) => (item.kind === 'notice' ? item.text : item.kind))).toEqual([
      'The server tracker asked for input: answered',
      'The server tracker asked for input: declined (no answer in time)',
      'Ward refused a request for input from tracker: the form has 1000 fields, more than 32',
    ]);
  });

  it('test_replaying_overlapping_batches_gives_the_same_state_as_one_pass_idempotent_from_a_cursor', () => {
    const event = viewFeed();
    const events = [
      event('run_started', RUN_STARTED),
      event('user_prompt', { text: 'hi' }),
      event('assistant_text', { text: 'Hello' }),
      event('assistant_text', { text: 'again' }),
      event('run_finished', { state: 'succeeded', reason: null }),
    ];
    const once = applyEvents(EMPTY_CONVERSATION, events);
    const pieces = applyEvents(applyEvents(applyEvents(EMPTY_CONVERSATION, events.slice(0, 3)), events.slice(1, 4)), events);
    expect(pieces).toEqual(once);
    expect(once.items.map((item) => item.kind)).toEqual(['user', 'assistant']);
    expect(once.items[1]).toMatchObject({ text: 'Hello\n\nagain' });
  });

  it('test_a_stop_reads_stopping_then_stopped_as_a_plain_notice_never_as_an_error', () => {
    const event = viewFeed();
    let state = applyEvents(EMPTY_CONVERSATION, [event('run_started', RUN_STARTED), event('run_stopping', { reason: 'stopped by the user' })]);
    expect(state.run?.state).toBe('stopping');
    state = applyEvents(state, [event('run_finished', { state: 'stopped', reason: 'stopped by the user' })]);
    expect(state.run?.state).toBe('stopped');
    expect(state.items).toEqual([{ kind: 'notice', key: 'e3', runId: 'run-1', tone: 'stopped', text: 'Stopped' }]);
  });

  it('test_an_uncertain_run_and_a_failed_run_are_told_apart_from_a_stop', () => {
    const event = viewFeed();
    const state = applyEvents(EMPTY_CONVERSATION, [event('run_finished', { state: 'uncertain', reason: 'the CLI was killed; 1 tool call(s) were in flight' })]);
    expect(state.items).toEqual([{ kind: 'notice', key: 'e1', runId: 'run-1', tone: 'warning', text: 'The outcome of this run is unknown: the CLI was killed; 1 tool call(s) were in flight' }]);
    const failed = applyEvents(EMPTY_CONVERSATION, [{ ...event('run_finished', { state: 'failed', reason: 'no model key' }), seq: 1 }]);
    expect(failed.items[0]).toMatchObject({ tone: 'error', text: 'The run failed: no model key' });
  });
});

describe('retries of the model call', () => {
  it('test_failed_calls_and_the_clis_retries_are_one_line_per_run_updated_in_place_not_two_rows_per_attempt', () => {
    const event = viewFeed();
    const failed = (attempt: number) => [
      event('model_call', { path: '/v1/messages', status: 500, durationMs: 5, problem: null, usage: null }),
      event('model_retry', { attempt, maxRetries: 10, delayMs: 600, status: 500, error: 'api_error' }),
    ];
    const retrying = applyEvents(EMPTY_CONVERSATION, [event('run_started', RUN_STARTED), event('user_prompt', { text: 'hi' }), ...failed(1), ...failed(2), ...failed(3), ...failed(4)]);
    const notices = (items: readonly TimelineItem[]) => items.filter((item) => item.kind === 'notice').map((item) => (item.kind === 'notice' ? [item.tone, item.text] : null));
    expect(notices(retrying.items)).toEqual([['info', 'Retrying the model (4 of 10) after HTTP 500']]);

    const answered = applyEvents(retrying, [
      event('model_call', { path: '/v1/messages', status: 200, durationMs: 5, problem: null, usage: null }),
      event('assistant_text', { text: 'Here.' }),
    ]);
    expect(notices(answered.items)).toEqual([['info', 'The model answered after 4 retries']]);

    // A second turn has its own line.
    const at = '2026-03-01T12:01:00.000Z';
    const second = applyEvents(answered, [
      event('run_started', RUN_STARTED, at, 'run-2'),
      event('model_call', { path: '/v1/messages', status: 529, durationMs: 5, problem: 'is overloaded (HTTP 529)', usage: null }, at, 'run-2'),
    ]);
    expect(notices(second.items)).toEqual([
      ['info', 'The model answered after 4 retries'],
      ['warning', 'The model provider is overloaded (HTTP 529)'],
    ]);
  });
});

describe('what each turn used', () => {
  it('test_a_line_under_each_turn_with_its_own_cost_and_a_total_for_the_conversation', () => {
    const turn = (runId: string, costUsd: number) => {
      const event = viewFeed(runId);
      return [
        event('run_started', RUN_STARTED),
        event('model_call', { path: '/v1/messages', status: 200, durationMs: 5, problem: null, usage: { inputTokens: 1200, outputTokens: 30, cacheReadTokens: 0, cacheCreationTokens: 0 } }),
        event('usage', { inputTokens: 1200, outputTokens: 30, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd }),
        event('run_finished', { state: 'succeeded', reason: null }),
      ];
    };
    const events = [...turn('run-1', 0.002), ...turn('run-2', 0.005)].map((view, index) => ({ ...view, seq: index + 1 }));
    const state = applyEvents(EMPTY_CONVERSATION, events);
    expect(state.items).toEqual([
      { kind: 'usage', key: 'u4', runId: 'run-1', text: 'Turn: 1,200 in · 30 out tokens · $0.0020' },
      { kind: 'usage', key: 'u8', runId: 'run-2', text: 'Turn: 1,200 in · 30 out tokens · $0.0030' },
    ]);
    expect(state.usageTotal).toEqual({ turns: 2, tokens: { input: 2400, output: 60, cacheRead: 0, cacheCreation: 0 }, costUsd: 0.005, unpricedTurns: 0 });
    // Folded in pieces (a replay in pages, then live), the same.
    expect(applyEvents(applyEvents(EMPTY_CONVERSATION, events.slice(0, 5)), events)).toEqual(state);
  });

  it('test_a_turn_of_a_model_the_cli_has_no_prices_for_says_cost_unknown_and_the_total_says_what_it_leaves_out', () => {
    const turn = (runId: string, model: string, costUsd: number) => {
      const event = viewFeed(runId);
      return [
        event('run_started', { ...RUN_STARTED, model }),
        event('usage', { inputTokens: 1200, outputTokens: 30, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd }),
        event('run_finished', { state: 'succeeded', reason: null }),
      ];
    };
    // The CLI priced my-corp-model at a default tier: its session total grew by 2.658, a guess.
    const events = [...turn('run-1', 'claude-sonnet-4-5', 0.002), ...turn('run-2', 'my-corp-model', 2.66), ...turn('run-3', 'us.anthropic.claude-haiku-4-5-20251001-v1:0', 2.661)].map((view, index) => ({ ...view, seq: index + 1 }));
    const state = applyEvents(EMPTY_CONVERSATION, events);
    expect(state.items.map((item) => (item.kind === 'usage' ? item.text : null))).toEqual([
      'Turn: 1,200 in · 30 out tokens · $0.0020',
      'Turn: 1,200 in · 30 out tokens · cost unknown',
      'Turn: 1,200 in · 30 out tokens · $0.0010',
    ]);
    expect(describeTotal(state.usageTotal)).toBe('3,600 in · 90 out tokens · $0.0030 + cost unknown for 1 turn');
  });
});

describe('events that do not parse (old or foreign data)', () => {
  it('test_shows_each_as_an_unreadable_notice_with_its_type_guesses_nothing_from_it_and_goes_on', () => {
    const feed = viewFeed();
    const raw = (type: string, payload: unknown): ArrivingEvent => ({ ...feed('user_prompt', { text: '' }), type, payload });
    // Parsed where they enter the renderer, then folded.
    const state = applyEvents(
      EMPTY_CONVERSATION,
      readIncomingEvents([
        raw('prompt', { text: 'an old prompt event' }),
        raw('run_finished', { outcome: 'cancelled', errors: ['boom'] }),
        raw('tool_call', { name: 'lookup', input: { q: 1 } }),
        raw('unreadable', { storedType: 'bidi\u202eevil\nline', problem: 'type: Invalid input' }),
        feed('assistant_text', { text: 'still here' }),
      ]),
    );
    expect(state.items).toEqual([
      { kind: 'notice', key: 'e1', runId: 'run-1', tone: 'warning', text: 'Unreadable event: prompt' },
      { kind: 'notice', key: 'e2', runId: 'run-1', tone: 'warning', text: 'Unreadable event: run_finished' },
      { kind: 'notice', key: 'e3', runId: 'run-1', tone: 'warning', text: 'Unreadable event: tool_call' },
      { kind: 'notice', key: 'e4', runId: 'run-1', tone: 'warning', text: 'Unreadable event: bidi\\u{202e}evil\\u{a}line' },
      { kind: 'assistant', key: 'e5', runId: 'run-1', at: '2026-03-01T12:00:00.000Z', text: 'still here' },
    ]);
    // A run_finished that does not parse says nothing about the run.
    expect(state.run).toBeNull();
    expect(state.lastSeq).toBe(5);
  });
});

describe('a tool call entry', () => {
  const base = { kind: 'tool', key: 'e1', runId: 'run-1', at: '2026-03-01T12:00:00.000Z', callId: 't1', tool: 'lookup', args: '{\n  "q": "ward"\n}', summary: 'q: ward', permissions: [] } as const;

  it('test_shows_the_tool_its_state_and_duration_and_opens_to_its_arguments_and_result', async () => {
    const view = await render(<ToolCallEntry item={{ ...base, status: 'ok', output: '120 bytes returned to the model', durationMs: 2_400 }} />);
    const summary = view.container.querySelector('.tool-summary') as HTMLButtonElement;
    // The collapsed row names the tool, summarizes its arguments, its state and how long it took.
    expect(summary.textContent).toBe('lookupq: warddone2.4 s');
    expect(summary.getAttribute('aria-expanded')).toBe('false');
    await click(summary);
    expect(view.container.querySelector('.tool-args')!.textContent).toBe('{\n  "q": "ward"\n}');
    expect(view.container.querySelector('.tool-output')!.textContent).toBe('120 bytes returned to the model');
    await view.unmount();
  });

  it('test_a_calls_card_says_how_many_files_it_changed_and_parallel_calls_say_they_share_theirs', async () => {
    const event = viewFeed();
    const file = { kind: 'file', size: 1, mode: 0o100644, hash: 'a'.repeat(64), stored: true } as const;
    const change = (name: string) => ({ root: '/w', path: name, change: 'added', before: null, after: file }) as const;
    const state = applyEvents(EMPTY_CONVERSATION, [
      event('run_started', RUN_STARTED),
      event('tool_call', { toolUseId: 't1', tool: 'Write', arguments: {} }),
      event('files_changed', { changes: [change('a'), change('b')], files: 2, scanMs: 1, toolUseIds: ['t1'] }),
      event('tool_call', { toolUseId: 't2', tool: 'Bash', arguments: {} }),
      event('tool_call', { toolUseId: 't3', tool: 'Bash', arguments: {} }),
      event('files_changed', { changes: [change('c')], files: 3, scanMs: 1, toolUseIds: ['t2', 't3'] }),
      event('files_changed', { changes: [change('d')], files: 4, scanMs: 1 }),
    ]);
    const tools = state.items.filter((item): item is Extract<TimelineItem, { kind: 'tool' }> => item.kind === 'tool');
    const shown: (string | undefined)[] = [];
    for (const tool of tools) {
      const view = await render(<ToolCallEntry item={tool} />);
      shown.push(view.container.querySelector('[data-testid="tool-changed"]')?.textContent);
      await view.unmount();
    }
    expect(shown).toEqual([
      'changed 2 files',
      'changed 1 file (with the calls beside it)',
      'changed 1 file (with the calls beside it)',
    ]);
    // The run's change set is still one row: the per-call parts and the rest of the turn.
    expect(state.items.filter((item) => item.kind === 'changes').map((item) => item.kind === 'changes' && item.text)).toEqual(['4 files changed (4 added)']);
  });

  it('test_shows_a_running_call_without_a_duration_and_an_error_open_with_its_message', async () => {
    const running = await render(<ToolCallEntry item={{ ...base, status: 'running', output: null, durationMs: null }} />);
    expect(running.container.querySelector('.tool-summary')!.textContent).toBe('lookupq: wardrunning…');
    await running.unmount();
    const failed = await render(<ToolCallEntry item={{ ...base, status: 'error', output: 'unreachable', durationMs: 15 }} />);
    expect([...failed.container.querySelectorAll('.tool-label')].at(-1)!.textContent).toBe('Error');
    expect(failed.container.querySelector('.tool-output')!.textContent).toBe('unreachable');
    await failed.unmount();
  });
});

describe('denials and tool errors read as what happened (issue 31)', () => {
  const DENIED_BY_YOU = { kind: 'read', value: '/x/secret.txt', tool: 'Read', argumentsSummary: '{}', decision: 'deny', answerer: { by: 'person', answer: 'deny' }, reason: 'denied by the person', via: 'approval', at: '2026-03-01T12:00:01.000Z' } as const;

  it('test_a_call_the_person_denied_is_a_neutral_denied_by_you_not_a_red_error_card', async () => {
    const event = viewFeed();
    const state = applyEvents(EMPTY_CONVERSATION, [
      event('run_started', RUN_STARTED),
      event('tool_call', { toolUseId: 't1', tool: 'Read', arguments: { file_path: '/x/secret.txt' } }),
      event('permission_decision', DENIED_BY_YOU),
      event('tool_result', { toolUseId: 't1', tool: 'Read', ok: false, bytes: 20, durationMs: 900, errorCode: 'tool_error', preview: 'denied by the person', previewTruncated: false }),
    ]);
    const tool = state.items.find((item): item is Extract<TimelineItem, { kind: 'tool' }> => item.kind === 'tool')!;
    expect(tool).toMatchObject({ status: 'denied', output: null, permissions: [{ decision: 'deny', text: 'Denied by you', byPerson: true }] });
    const view = await render(<ToolCallEntry item={tool} />);
    const card = view.container.querySelector('[data-testid="tool-call"]')!;
    expect(card.className).not.toContain('tool-error');
    expect(card.querySelector('.tool-status')!.textContent).toBe('Denied by you');
    // Closed like a call that worked; opened, no "Error" section and no "(denied by the person)".
    expect(card.querySelector('.tool-details')).toBeNull();
    await click(card.querySelector('.tool-summary') as HTMLButtonElement);
    expect(view.container.textContent).not.toContain('denied by the person');
    expect([...view.container.querySelectorAll('.tool-label')].map((label) => label.textContent)).toEqual(['Arguments']);
    await view.unmount();
  });

  it('test_a_tool_error_shows_the_sentence_never_the_clis_markup', () => {
    const event = viewFeed();
    const state = applyEvents(EMPTY_CONVERSATION, [
      event('run_started', RUN_STARTED),
      event('tool_call', { toolUseId: 't1', tool: 'Bash', arguments: { command: 'ls' } }),
      event('tool_result', {
        toolUseId: 't1',
        tool: 'Bash',
        ok: false,
        bytes: 134,
        durationMs: 33,
        errorCode: 'tool_error',
        preview: '<tool_use_error>Error: No such tool available: Bash. Bash is disabled for this session.</tool_use_error>\n\n<system-reminder>\n<total_tokens>1 left</total_tokens>\n</system-reminder>',
        previewTruncated: false,
      }),
    ]);
    const tool = state.items.find((item): item is Extract<TimelineItem, { kind: 'tool' }> => item.kind === 'tool')!;
    expect(tool).toMatchObject({ status: 'error', output: 'No such tool available: Bash. Bash is disabled for this session.' });
  });

  it('test_a_sidebar_preview_is_plain_text_not_raw_markdown', () => {
    expect(plainPreview('## Plan **short**')).toBe('Plan short');
    expect(plainPreview('- first `step`\n- see [the docs](https://example.com) and *this*')).toBe('first step see the docs and this');
    expect(plainPreview('> quoted __bold__ and snake_case_name')).toBe('quoted bold and snake_case_name');
    expect(plainPreview('2 * 3 * 4 is 24')).toBe('2 * 3 * 4 is 24');
  });
});

describe('markdown from the model (U3)', () => {
  it('test_keeps_raw_html_as_text_and_makes_only_http_s_links_actions_through_main', async () => {
    const opened: string[] = [];
    const view = await render(
      <Markdown source={'<img src=x onerror=alert(1)> [a](javascript:alert(1)) [b](data:text/html,x) [c](/relative) [d](https://example.com/x)'} onOpenLink={(url) => opened.push(url)} />,
    );
    expect(view.container.querySelectorAll('img, script, a, iframe').length).toBe(0);
    expect(view.container.textContent).toContain('<img src=x onerror=alert(1)>');
    expect([...view.container.querySelectorAll('.inert-link')].map((e) => e.textContent)).toEqual(['a', 'b', 'c']);
    const link = view.container.querySelector('.untrusted-link') as HTMLButtonElement;
    expect(link.textContent).toBe('d');
    await click(link);
    expect(opened).toEqual(['https://example.com/x']);
    await view.unmount();
  });

  it('test_renders_code_headings_lists_and_emphasis_as_elements', async () => {
    const view = await render(<Markdown source={'# Title\n\n- one **bold**\n- two `code`\n\n```\n<b>not bold</b>\n```'} onOpenLink={() => undefined} />);
    expect(view.container.querySelector('h3')!.textContent).toBe('Title');
    expect([...view.container.querySelectorAll('li')].map((li) => li.textContent)).toEqual(['one bold', 'two code']);
    expect(view.container.querySelector('pre code')!.textContent).toBe('<b>not bold</b>');
    expect(view.container.querySelectorAll('b').length).toBe(0);
    await view.unmount();
  });

  it('test_renders_tables_and_nested_lists_escapes_what_entities_decode_to_and_offers_no_link_longer_than_main_opens', async () => {
    const long = `https://example.com/${'x'.repeat(2_100)}`;
    const source = ['| a | b |', '| - | -: |', '| 1 | 2 |', '', '- one', '  - nested', '', 'hidden &#x202E;txt.exe', '', `[too long](${long}) and [parens](https://en.wikipedia.org/wiki/Ward_(surname))`].join('\n');
    const opened: string[] = [];
    const view = await render(<Markdown source={source} onOpenLink={(url) => opened.push(url)} />);
    expect([...view.container.querySelectorAll('th')].map((th) => th.textContent)).toEqual(['a', 'b']);
    expect(view.container.querySelector('td.align-right')!.textContent).toBe('2');
    expect(view.container.querySelector('li li')!.textContent).toBe('nested');
    expect(view.container.textContent).toContain('hidden \\u{202e}txt.exe');
    expect(view.container.querySelector('.inert-link')!.getAttribute('title')).toMatch(/too long to open/);
    await click(view.container.querySelector('.untrusted-link') as HTMLButtonElement);
    expect(opened).toEqual(['https://en.wikipedia.org/wiki/Ward_(surname)']);
    await view.unmount();
  });

  it('test_a_long_answer_is_cut_into_pieces_outside_code_fences_and_growing_it_changes_only_its_last_piece', () => {
    const paragraph = `${'word '.repeat(100)}\n\n`;
    const fence = `\`\`\`\n${'code\n\n'.repeat(3_000)}\`\`\`\n\n`;
    const text = paragraph.repeat(200) + fence + paragraph.repeat(200);
    const whole = markdownPieces(text);
    expect(whole.length).toBeGreaterThan(5);
    expect(whole.join('')).toBe(text);
    // No piece cuts a code block in two.
    expect(whole.every((piece) => (piece.match(/```/g) ?? []).length % 2 === 0)).toBe(true);
    // Grown a bit at a time (an answer streaming in), every piece but the last is as it was.
    let before = markdownPieces(text.slice(0, 50_000));
    for (let length = 50_000; length <= text.length; length += 9_973) {
      const now = markdownPieces(text.slice(0, length));
      expect(now.slice(0, before.length - 1)).toEqual(before.slice(0, -1));
      before = now;
    }
    expect(markdownPieces(text)).toEqual(whole);
  });
});
