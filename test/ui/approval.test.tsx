// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import type { ApprovalAnswer, PendingApprovalView } from '../../preload/contract.js';
import { ApprovalPrompt } from '../../renderer/src/components/ApprovalPrompt.js';
import { button, buttons, click, render } from './render.js';

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
    choices: ['allow_once', 'allow_conversation', 'deny'],
    expiresAt: new Date(NOW + 90_500).toISOString(),
    ...overrides,
  };
}

describe('the approval prompt (P3)', () => {
  it('shows who asks for what, the time left, and answers allow once', async () => {
    const answers: ApprovalAnswer[] = [];
    const view = await render(<ApprovalPrompt approval={approval()} now={NOW} onAnswer={(answer) => answers.push(answer)} />);
    expect(view.container.querySelector('h3')!.textContent).toBe('Agent tooly wants to call the tool fixture/echo');
    expect(view.container.querySelector('.approval-time')!.textContent).toBe('91 s left — no answer denies');
    expect(buttons(view.container).map((b) => b.textContent)).toEqual(['Allow once', 'Allow in this conversation', 'Deny']);
    await click(button(view.container, 'Allow once'));
    expect(answers).toEqual(['allow_once']);
    // One answer only: the buttons are disabled once it is sent.
    expect(buttons(view.container).every((b) => b.disabled)).toBe(true);
    await view.unmount();
  });

  it('answers allow for this conversation and deny with their own values', async () => {
    for (const [name, expected] of [
      ['Allow in this conversation', 'allow_conversation'],
      ['Deny', 'deny'],
    ] as const) {
      const answers: ApprovalAnswer[] = [];
      const view = await render(<ApprovalPrompt approval={approval()} now={NOW} onAnswer={(answer) => answers.push(answer)} />);
      await click(button(view.container, name));
      expect(answers).toEqual([expected]);
      await view.unmount();
    }
  });

  it('offers only allow once and deny when main offers only those (a compound command)', async () => {
    const view = await render(<ApprovalPrompt approval={approval({ choices: ['allow_once', 'deny'] })} now={NOW} onAnswer={() => undefined} />);
    expect(buttons(view.container).map((b) => b.textContent)).toEqual(['Allow once', 'Deny']);
    await view.unmount();
  });

  it('once the time is up it says denied and takes no answer', async () => {
    const view = await render(<ApprovalPrompt approval={approval({ expiresAt: new Date(NOW - 1).toISOString() })} now={NOW} onAnswer={() => undefined} />);
    expect(view.container.querySelector('.approval-time')!.textContent).toBe('Timed out: denied');
    expect(buttons(view.container).every((b) => b.disabled)).toBe(true);
    await view.unmount();
  });
});
