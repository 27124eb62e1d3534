/** A server's request for input reaches the window with the approvals, and the window's answer goes back through main. */
import { describe, expect, it } from 'vitest';
import type { PushedEvent } from '../../preload/contract.js';
import { WardApp } from '../../main/app/ward-app.js';
import { DesktopIpc } from '../../main/ipc/handlers.js';
import { APP_ENTRY } from '../../main/ipc/sender.js';
import { ApprovalQueue } from '../../main/permissions/approval-queue.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { parseElicitation } from '../../main/upstreams/elicitation.js';
import { tempDir } from '../support/temp.js';

const WINDOW = { windowKnown: true, isTopFrame: true, frameUrl: APP_ENTRY };

function desktop() {
  const approvals = new ApprovalQueue(60_000);
  const opened: string[] = [];
  const ipc = new DesktopIpc(new WardApp({ folder: new DataFolder(tempDir()), env: {}, policy: null }), { approvals, openSignIn: async (url) => void opened.push(url.href) });
  const pushed: PushedEvent[] = [];
  const client = { id: 'w', push: (event: PushedEvent) => pushed.push(event) };
  const invoke = (channel: string, payload: unknown) => ipc.invokeFrom(WINDOW, client, channel, payload);
  return { approvals, opened, pushed, invoke };
}

const question = (params: unknown) => ({ server: 'tracker', agent: 'helper', namespace: 'default', conversationId: null, runId: null, request: parseElicitation(params) });

describe('elicitations in the desktop (approval area)', () => {
  it('test_are_pushed_with_the_approvals_and_an_accepted_page_is_opened_by_main_not_by_the_page', async () => {
    const { approvals, opened, pushed, invoke } = desktop();
    await invoke('approvals.watch', { namespace: 'default' });
    const reply = approvals.elicit(question({ mode: 'url', message: 'Link your account', elicitationId: 'x', url: 'https://example.com/link?once=1' }), new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    const last = pushed.at(-1);
    expect(last).toMatchObject({ kind: 'approvals', pending: [], elicitations: [{ server: 'tracker', mode: 'url', url: 'https://example.com/link?once=1' }] });
    const id = last?.kind === 'approvals' ? last.elicitations[0]!.id : '';
    expect(await invoke('elicitations.answer', { namespace: 'default', elicitationId: id, action: 'accept' })).toEqual({ ok: true, value: null });
    expect(await reply).toEqual({ action: 'accept' });
    expect(opened).toEqual(['https://example.com/link?once=1']);
    expect(pushed.at(-1)).toMatchObject({ elicitations: [] });
  });

  it('test_a_form_that_does_not_fit_is_refused_with_the_field_named_and_stays_open_an_unknown_id_is_not_found', async () => {
    const { approvals, invoke } = desktop();
    const reply = approvals.elicit(question({ message: 'How many?', requestedSchema: { type: 'object', properties: { count: { type: 'integer', minimum: 1 } }, required: ['count'] } }), new AbortController().signal);
    const [pending] = approvals.elicitations(parseNamespace('default'));
    expect(await invoke('elicitations.answer', { namespace: 'default', elicitationId: pending!.id, action: 'accept', content: { count: 0 } })).toMatchObject({
      ok: false,
      error: { code: 'usage', message: 'count is out of range' },
    });
    expect(await invoke('elicitations.answer', { namespace: 'default', elicitationId: 'nope', action: 'decline' })).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(await invoke('elicitations.answer', { namespace: 'default', elicitationId: pending!.id, action: 'accept', content: { count: 2 } })).toEqual({ ok: true, value: null });
    expect(await reply).toEqual({ action: 'accept', content: { count: 2 } });
  });
});
