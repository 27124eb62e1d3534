import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { PromptQuestion } from '../../main/permissions/prompter.js';
import { prompterFor, renderQuestion, terminalPrompter } from '../../main/permissions/terminal-prompter.js';

const QUESTION: PromptQuestion = {
  tool: 'Read',
  kind: 'read',
  value: '/etc/hostname',
  argumentsSummary: '{"file_path":"/etc/hostname"}',
  reason: 'no grant covers read /etc/hostname',
  agent: 'helper',
  namespace: 'default',
  choices: ['once', 'conversation', 'always', 'deny'],
};

function terminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  return { input, output, shown: () => shown };
}

describe('terminal prompter', () => {
  it('test_each_key_maps_to_its_answer', async () => {
    for (const [key, answer] of [['o', 'once'], ['c', 'conversation'], ['a', 'always'], ['d', 'deny'], ['conversation', 'conversation']] as const) {
      const { input, output } = terminal();
      const pending = terminalPrompter(input, output).ask(QUESTION, new AbortController().signal);
      input.write(`${key}\n`);
      expect(await pending).toBe(answer);
    }
  });

  it('test_the_question_lists_the_choices_and_what_is_asked', async () => {
    const { input, output, shown } = terminal();
    const pending = terminalPrompter(input, output).ask(QUESTION, new AbortController().signal);
    input.write('d\n');
    await pending;
    expect(shown()).toContain('Ward: agent helper (namespace default) wants to read /etc/hostname');
    expect(shown()).toContain('[o] allow once  [c] allow for this conversation  [a] always allow for this agent in this namespace  [d] deny');
  });

  it('test_the_question_says_how_long_is_left_to_answer_and_that_silence_denies', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(renderQuestion({ ...QUESTION, expiresAt: now + 298_000 }, now)).toContain('[d] deny  (answer within 4m 58s; no answer denies)\n> ');
    expect(renderQuestion({ ...QUESTION, expiresAt: now + 19_200 }, now)).toContain('(answer within 20s; no answer denies)');
  });

  it('test_twenty_seconds_before_the_deny_the_terminal_is_reminded_once_and_not_after_an_answer', async () => {
    const { input, output, shown } = terminal();
    const pending = terminalPrompter(input, output).ask({ ...QUESTION, expiresAt: Date.now() + 20_300 }, new AbortController().signal);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(shown()).toContain('\n(20s left to answer; no answer denies)\n> ');
    input.write('o\n');
    expect(await pending).toBe('once');

    const answered = terminal();
    const early = terminalPrompter(answered.input, answered.output).ask({ ...QUESTION, expiresAt: Date.now() + 20_300 }, new AbortController().signal);
    answered.input.write('d\n');
    expect(await early).toBe('deny');
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(answered.shown()).not.toContain('left to answer');
  });

  it('test_control_bidi_and_zero_width_characters_are_escaped_and_length_is_bounded', () => {
    const hostile = { ...QUESTION, value: `/tmp/\u001b[2J\u202eevil\u200b\nfake prompt ${'x'.repeat(1000)}`, argumentsSummary: 'a\rb' };
    const text = renderQuestion(hostile);
    expect(text).not.toMatch(/[\u001b\u202e\u200b\r]/);
    expect(text).toContain('\\u{1b}[2J\\u{202e}evil\\u{200b}\\u{a}fake prompt');
    const line = text.split('\n').find((candidate) => candidate.startsWith('Ward: agent'))!;
    expect(line.length).toBeLessThan(420);
  });

  it('test_a_choice_not_offered_is_not_accepted', async () => {
    const { input, output } = terminal();
    const pending = terminalPrompter(input, output).ask({ ...QUESTION, choices: ['once', 'deny'] }, new AbortController().signal);
    input.write('a\nc\nx\n');
    expect(await pending).toBe('deny');
  });

  it('test_a_wrong_answer_is_asked_again', async () => {
    const { input, output, shown } = terminal();
    const pending = terminalPrompter(input, output).ask(QUESTION, new AbortController().signal);
    input.write('yes please\n');
    input.write('o\n');
    expect(await pending).toBe('once');
    expect(shown()).toContain('answer one of o/c/a/d');
  });

  it('test_end_of_input_is_a_deny', async () => {
    const { input, output } = terminal();
    const pending = terminalPrompter(input, output).ask(QUESTION, new AbortController().signal);
    input.end();
    expect(await pending).toBe('deny');
  });

  it('test_abort_is_a_deny_and_says_so', async () => {
    const { input, output, shown } = terminal();
    const controller = new AbortController();
    const pending = terminalPrompter(input, output).ask(QUESTION, controller.signal);
    controller.abort();
    expect(await pending).toBe('deny');
    expect(shown()).toContain('(no answer in time, or the run ended: denied)');
  });

  it('test_without_a_tty_no_one_is_asked', () => {
    const { input, output } = terminal();
    expect(prompterFor(input, output).interactive).toBe(false);
    expect(prompterFor(Object.assign(input, { isTTY: true }), Object.assign(output, { isTTY: true })).interactive).toBe(true);
  });

  it('test_blank_padding_in_a_question_shows_as_a_short_count_not_hundreds_of_blank_cells', () => {
    const padded = `/tmp/notes.txt${'\u2800'.repeat(400)}${'\u3164'.repeat(30)}/home/me/.ssh/id_rsa`;
    const shown = renderQuestion({ ...QUESTION, value: padded, argumentsSummary: padded, reason: padded });
    expect(shown).toContain('wants to read /tmp/notes.txt ⟨430 blanks⟩ /home/me/.ssh/id_rsa');
    expect(shown).not.toMatch(/[\u2800\u3164]/);
    expect(Math.max(...shown.split('\n').map((line) => line.length))).toBeLessThan(200);
  });
});
