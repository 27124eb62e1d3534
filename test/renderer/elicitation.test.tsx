// @vitest-environment happy-dom
import { describe, expect, it } from 'vitest';
import type { ElicitationAction, ElicitationFieldValue, PendingElicitationView } from '../../common/views.js';
import { ElicitationPrompt } from '../../renderer/src/components/ElicitationPrompt.js';
import { button, buttons, click, render, settle, typeInto } from './render.js';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

const FORM: PendingElicitationView = {
  id: 'e1',
  conversationId: null,
  runId: null,
  agent: 'helper',
  server: 'tracker',
  message: 'Which project?',
  mode: 'form',
  fields: [
    { name: 'project', title: 'Project', description: '', kind: 'enum', required: true, sensitive: false, format: null, options: [{ value: 'a', label: 'Alpha' }, { value: 'b', label: 'Beta' }], default: 'b' },
    { name: 'count', title: 'Count', description: 'How many', kind: 'integer', required: false, sensitive: false, format: null, options: [], default: 3 },
    { name: 'token', title: 'Token', description: '', kind: 'string', required: true, sensitive: true, format: null, options: [], default: null },
    { name: 'notify', title: 'Notify', description: '', kind: 'boolean', required: false, sensitive: false, format: null, options: [], default: true },
  ],
  url: null,
  expiresAt: new Date(NOW + 60_000).toISOString(),
};

describe('a server asks for input (elicitation) in the approval area', () => {
  it('test_shows_the_form_with_defaults_filled_in_masks_a_sensitive_field_and_sends_what_the_person_accepts', async () => {
    const sent: Array<[ElicitationAction, Record<string, ElicitationFieldValue> | undefined]> = [];
    const view = await render(<ElicitationPrompt elicitation={FORM} now={NOW} onAnswer={async (action, content) => void sent.push([action, content])} />);
    expect(view.container.querySelector('h2')!.textContent).toBe('The server tracker asks for input (agent helper)');
    expect(view.container.querySelector('select')!.value).toBe('b');
    expect(view.container.querySelector<HTMLInputElement>('#elicit-count')!.value).toBe('3');
    expect(view.container.querySelector<HTMLInputElement>('#elicit-token')!.type).toBe('password');
    expect(view.container.querySelector<HTMLInputElement>('#elicit-notify')!.checked).toBe(true);
    expect(buttons(view.container).map((b) => b.textContent)).toEqual(['Accept', 'Decline', 'Cancel']);
    await typeInto(view.container.querySelector<HTMLInputElement>('#elicit-token')!, 's3cret');
    await click(button(view.container, 'Accept'));
    await settle(() => sent.length === 1, 'the answer');
    expect(sent).toEqual([['accept', { project: 'b', count: 3, token: 's3cret', notify: true }]]);
    await view.unmount();
  });

  it('test_a_refused_answer_shows_main_s_reason_and_the_form_stays_to_be_fixed', async () => {
    const view = await render(<ElicitationPrompt elicitation={FORM} now={NOW} onAnswer={() => Promise.reject(new Error('Token is required'))} />);
    await click(button(view.container, 'Accept'));
    await settle(() => view.container.querySelector('[role=alert]') !== null, 'the reason');
    expect(view.container.querySelector('[role=alert]')!.textContent).toBe('Token is required');
    expect(button(view.container, 'Accept').disabled).toBe(false);
    await view.unmount();
  });

  it('test_a_url_request_shows_the_page_and_offers_to_open_it_decline_or_cancel', async () => {
    const sent: ElicitationAction[] = [];
    const url: PendingElicitationView = { ...FORM, mode: 'url', fields: [], url: 'https://example.com/connect' };
    const view = await render(<ElicitationPrompt elicitation={url} now={NOW} onAnswer={async (action) => void sent.push(action)} />);
    expect(view.container.querySelector('h2')!.textContent).toBe('The server tracker asks you to open a page (agent helper)');
    expect(view.container.querySelector('code')!.textContent).toBe('https://example.com/connect');
    expect(buttons(view.container).map((b) => b.textContent)).toEqual(['Open in browser', 'Decline', 'Cancel']);
    await click(button(view.container, 'Decline'));
    await settle(() => sent.length === 1, 'the answer');
    expect(sent).toEqual(['decline']);
    await view.unmount();
  });
});
