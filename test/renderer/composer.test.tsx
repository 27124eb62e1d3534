// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import { Composer } from '../../renderer/src/components/Composer.js';
import type { RunStatus } from '../../renderer/src/state/timeline.js';
import { button, buttons, click, render, typeInto } from './render.js';

const run = (state: RunStatus['state']): RunStatus => ({ id: 'r1', state, reason: null });
const status = (container: HTMLElement) => container.querySelector('[data-testid=run-state]')!.textContent;
const labels = (container: HTMLElement) => buttons(container).map((b) => `${b.textContent}${b.disabled ? ' (disabled)' : ''}`);

describe('the Stop control (R6)', () => {
  it('test_offers_stop_while_running_and_clicking_it_asks_to_stop_once', async () => {
    const stops: string[] = [];
    const view = await render(<Composer run={run('running')} onSend={async () => true} onStop={() => stops.push('stop')} />);
    expect(labels(view.container)).toEqual(['Stop']);
    expect(status(view.container)).toBe('Responding…');
    await click(button(view.container, 'Stop'));
    expect(stops).toEqual(['stop']);
    await view.unmount();
  });

  it('test_shows_stopping_disabled_no_send_while_tools_drain', async () => {
    const view = await render(<Composer run={run('stopping')} onSend={async () => true} onStop={() => undefined} />);
    expect(labels(view.container)).toEqual(['Stopping… (disabled)']);
    expect(status(view.container)).toBe('Stopping…');
    // The box says what is going on and what to do, not just to wait.
    expect(view.container.querySelector('textarea')!.placeholder).toBe('Stopping — waiting for the tools that are running to finish');
    await view.unmount();
  });

  it('test_shows_stopped_as_a_plain_state_not_an_error_and_accepts_the_next_prompt', async () => {
    const sent: string[] = [];
    const view = await render(<Composer run={run('stopped')} onSend={async (prompt) => (sent.push(prompt), true)} onStop={() => undefined} />);
    expect(status(view.container)).toBe('Stopped');
    expect(view.container.querySelector('.run-stopped')).not.toBeNull();
    expect(view.container.querySelector('[role=alert]')).toBeNull();
    expect(labels(view.container)).toEqual(['Send (disabled)']);
    await view.unmount();
  });

  it('test_refuses_a_new_prompt_while_a_run_is_uncertain', async () => {
    const view = await render(<Composer run={run('uncertain')} onSend={async () => true} onStop={() => undefined} />);
    expect(status(view.container)).toBe('Outcome unknown');
    expect(labels(view.container)).toEqual(['Send (disabled)']);
    await view.unmount();
  });
});

describe('starting to write (issue 19)', () => {
  it('test_tells_the_chat_once_when_the_person_starts_writing_and_again_only_after_the_box_was_emptied', async () => {
    const writing: string[] = [];
    const view = await render(<Composer run={null} onSend={async () => true} onStop={() => undefined} onWriting={() => writing.push('writing')} />);
    const box = view.container.querySelector('textarea')!;
    await typeInto(box, 'W');
    await typeInto(box, 'Which word?');
    expect(writing).toEqual(['writing']);
    await typeInto(box, '');
    await typeInto(box, 'Another');
    expect(writing).toEqual(['writing', 'writing']);
    await view.unmount();
  });
});
