// @vitest-environment happy-dom
import { act } from 'react';
import { describe, expect, it } from 'vitest';
import type { ApprovalAnswer, PendingApprovalView } from '../../common/views.js';
import { ApprovalPrompt, ARM_MS } from '../../renderer/src/components/ApprovalPrompt.js';
import { button, buttons, click, render } from './render.js';

/** An approval takes input only once it has been on screen for ARM_MS. */
const armed = () => act(() => new Promise<void>((resolve) => setTimeout(resolve, ARM_MS + 50)));

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

function approval(overrides: Partial<PendingApprovalView> = {}): PendingApprovalView {
  return {
    id: 'a1',
    conversationId: null,
    runId: null,
    agent: 'tooly',
    tool: 'mcp__ward__echo',
    summary: 'wants to call the tool fixture/echo',
    details: '{"text":"hi"}',
    reason: 'no grant covers mcp fixture/echo',
    choices: ['allow_once', 'allow_conversation', 'allow_agent', 'deny'],
    expiresAt: new Date(NOW + 90_500).toISOString(),
    ...overrides,
  };
}

describe('the approval prompt (P3)', () => {
  it('test_shows_who_asks_for_what_the_time_left_and_answers_allow_once', async () => {
    const answers: ApprovalAnswer[] = [];
    const view = await render(<ApprovalPrompt approval={approval()} now={NOW} onAnswer={(answer) => answers.push(answer)} />);
    expect(view.container.querySelector('h2')!.textContent).toBe('Agent tooly wants to call the tool fixture/echo');
    expect(view.container.querySelector('.approval-time')!.textContent).toBe('91 s left — no answer denies');
    expect(buttons(view.container).map((b) => b.textContent)).toEqual(['Allow once', 'Allow in this conversation', 'Always allow for this agent', 'Deny']);
    await armed();
    await click(button(view.container, 'Allow once'));
    expect(answers).toEqual(['allow_once']);
    // One answer only: the buttons are disabled once it is sent.
    expect(buttons(view.container).every((b) => b.disabled)).toBe(true);
    await view.unmount();
  });

  it('test_answers_allow_for_this_conversation_and_deny_with_their_own_values', async () => {
    for (const [name, expected] of [
      ['Allow in this conversation', 'allow_conversation'],
      ['Always allow for this agent', 'allow_agent'],
      ['Deny', 'deny'],
    ] as const) {
      const answers: ApprovalAnswer[] = [];
      const view = await render(<ApprovalPrompt approval={approval()} now={NOW} onAnswer={(answer) => answers.push(answer)} />);
      await armed();
      await click(button(view.container, name));
      expect(answers).toEqual([expected]);
      await view.unmount();
    }
  });

  it('test_offers_only_allow_once_and_deny_when_main_offers_only_those_a_compound_command', async () => {
    const view = await render(<ApprovalPrompt approval={approval({ choices: ['allow_once', 'deny'] })} now={NOW} onAnswer={() => undefined} />);
    expect(buttons(view.container).map((b) => b.textContent)).toEqual(['Allow once', 'Deny']);
    await view.unmount();
  });

  it('test_once_the_time_is_up_it_says_denied_and_takes_no_answer', async () => {
    const view = await render(<ApprovalPrompt approval={approval({ expiresAt: new Date(NOW - 1).toISOString() })} now={NOW} onAnswer={() => undefined} />);
    expect(view.container.querySelector('.approval-time')!.textContent).toBe('Timed out: denied');
    expect(buttons(view.container).every((b) => b.disabled)).toBe(true);
    await view.unmount();
  });

  it('test_ignores_a_click_or_escape_in_its_first_moments_then_escape_with_focus_inside_denies', async () => {
    const answers: ApprovalAnswer[] = [];
    const view = await render(<ApprovalPrompt approval={approval()} now={NOW} onAnswer={(answer) => answers.push(answer)} />);
    // Meant for something else: a click and an Escape the moment it appears answer nothing.
    await click(button(view.container, 'Allow once'));
    const deny = button(view.container, 'Deny');
    await act(async () => {
      deny.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(answers).toEqual([]);
    expect(view.container.querySelector('[data-armed]')!.getAttribute('data-armed')).toBe('false');
    await armed();
    await act(async () => {
      deny.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }));
    });
    expect(answers).toEqual(['deny']);
    await view.unmount();
  });
});
