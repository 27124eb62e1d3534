// @vitest-environment happy-dom
/**
 * The desktop approval card as a person meets it: the question main builds (escaped there, D1)
 * shown without hundreds of blank cells, and no button a stray keystroke could press (P3).
 */
import { act } from 'react';
import { describe, expect, it } from 'vitest';
import type { ApprovalAnswer } from '../../common/views.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { ApprovalQueue } from '../../main/permissions/approval-queue.js';
import type { PromptQuestion } from '../../main/permissions/prompter.js';
import { ApprovalPrompt, ARM_MS } from '../../renderer/src/components/ApprovalPrompt.js';
import { buttons, render } from './render.js';

const PADDED = `/tmp/notes.txt${'\u2800'.repeat(400)}${'\u3164'.repeat(30)}/home/me/.ssh/id_rsa`;

const QUESTION: PromptQuestion = {
  tool: 'Read',
  kind: 'read',
  value: PADDED,
  argumentsSummary: PADDED,
  reason: PADDED,
  agent: 'helper',
  namespace: 'default',
  choices: ['once', 'conversation', 'always', 'deny'],
};

/** The view main hands the window for a question. */
function pendingView(question: PromptQuestion) {
  const queue = new ApprovalQueue(60_000);
  void queue.ask(question, new AbortController().signal);
  return queue.pending(parseNamespace('default'))[0]!;
}

describe('the approval card (D1, P3)', () => {
  it('test_blank_padding_in_the_question_shows_as_a_short_count_not_hundreds_of_blank_cells', async () => {
    const view = await render(<ApprovalPrompt approval={pendingView(QUESTION)} onAnswer={() => undefined} />);
    const text = view.container.textContent!;
    expect(text).toContain('wants to read /tmp/notes.txt ⟨430 blanks⟩ /home/me/.ssh/id_rsa');
    expect(text).not.toMatch(/[\u2800\u3164]/);
    expect(text.length).toBeLessThan(400);
    await view.unmount();
  });

  it('test_no_button_is_a_default_one_it_takes_no_focus_and_enter_or_space_typed_elsewhere_answers_nothing', async () => {
    const field = document.createElement('textarea');
    document.body.appendChild(field);
    field.focus();
    const answers: ApprovalAnswer[] = [];
    const view = await render(<ApprovalPrompt approval={pendingView({ ...QUESTION, value: '/tmp/notes.txt' })} onAnswer={(answer) => answers.push(answer)} />);
    await act(() => new Promise<void>((resolve) => setTimeout(resolve, ARM_MS + 50)));
    expect(document.activeElement).toBe(field);
    // Nothing submits or is focused for the person: every button is a plain one, none autofocused, no form around them.
    for (const button of buttons(view.container)) {
      expect(button.getAttribute('type')).toBe('button');
      expect(button.hasAttribute('autofocus')).toBe(false);
    }
    expect(view.container.querySelector('form')).toBeNull();
    await act(async () => {
      for (const key of ['Enter', ' ']) {
        field.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
        field.dispatchEvent(new KeyboardEvent('keyup', { key, bubbles: true }));
      }
    });
    expect(answers).toEqual([]);
    expect(document.activeElement).toBe(field);
    await view.unmount();
    field.remove();
  });
});
