// @vitest-environment happy-dom
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildWardApi, type PushedEvent, type WardApi } from '../../preload/contract.js';
import { journalEvent } from '../../common/events.js';
import type { DesktopIpc } from '../../main/ipc/handlers.js';
import { desktopIpcFor } from '../support/desktop.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { dispatch } from '../../main/ipc/dispatch.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { ChatView } from '../../renderer/src/components/ChatView.js';
import { PushRouter } from '../../renderer/src/state/follow.js';
import { RUN_STARTED } from '../support/events.js';
import { tempDir } from '../support/temp.js';
import { button, click, render, settle } from './render.js';

// happy-dom lays nothing out, and the virtualized timeline renders no rows into a viewport 0 px
// high: give its viewport the height it has in the app's window. Row heights, scrolling and the
// 10,000-message window are tested where layout is real: test/e2e/long-conversation.test.ts.
const clientHeight = Object.getOwnPropertyDescriptor(HTMLElement.prototype, 'clientHeight')!;
beforeAll(() => {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', {
    configurable: true,
    get(this: HTMLElement) {
      return this.classList.contains('vlist') ? 685 : clientHeight.get!.call(this);
    },
  });
});
afterAll(() => {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', clientHeight);
});

const cores: DataFolder[] = [];
afterEach(() => {
  for (const core of cores.splice(0)) core.close();
});

/** window.ward over the real app service and a real SQLite store, in-process (no IPC). */
function realApi(): { api: WardApi; core: DataFolder; service: DesktopIpc } {
  const core = new DataFolder(tempDir('ward-ui-'));
  cores.push(core);
  const service = desktopIpcFor(core);
  const listeners = new Set<(event: PushedEvent) => void>();
  const client = { id: 'ui-test', push: (event: PushedEvent) => listeners.forEach((listener) => listener(event)) };
  const api = buildWardApi(
    (channel, payload) => dispatch(service.handlers, client, channel, payload),
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  );
  return { api, core, service };
}

function seed(core: DataFolder, title: string) {
  const store = core.store(parseNamespace('default'));
  const agent = store.agents.find('helper') ?? store.agents.publish('helper', { instructions: 'Be brief.' });
  return { store, conversation: store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title }) };
}

describe('the chat view on the real core', () => {
  it('test_shows_an_uncertain_run_with_a_reconcile_action_that_frees_the_conversation', async () => {
    const { api, core } = realApi();
    const { store, conversation } = seed(core, 'Crashed run');
    const { run } = store.runs.admit(conversation.id, 'req-1', 'fp');
    store.runs.transition(run.id, 'running');
    store.journal.appendMany(conversation.id, [
      { ...journalEvent('run_started', RUN_STARTED), runId: run.id },
      { ...journalEvent('user_prompt', { text: 'delete the old files' }), runId: run.id },
    ]);
    store.runs.transition(run.id, 'uncertain', 'the Ward process ended while the run was running; its outcome is unknown');

    const router = new PushRouter(api);
    const view = await render(<ChatView api={api} router={router} namespace="default" conversationId={conversation.id} approvals={[]} onOpenLink={() => undefined} />);
    await settle(() => view.container.querySelector('[data-testid=uncertain-banner]') !== null, 'the uncertain banner');
    const banner = view.container.querySelector('[data-testid=uncertain-banner]')!;
    expect(banner.textContent).toContain('its outcome is unknown');
    expect(view.container.querySelector('[data-testid=run-state]')!.textContent).toBe('Outcome unknown');
    expect(button(view.container, 'Send').disabled).toBe(true);

    // Nothing is chosen for the person: Reconcile waits for an outcome.
    expect(button(view.container, 'Reconcile').disabled).toBe(true);
    await click(view.container.querySelector<HTMLInputElement>('input[type=radio][value=failed]')!);
    await click(button(view.container, 'Reconcile'));
    await settle(() => view.container.querySelector('[data-testid=uncertain-banner]') === null, 'the banner to go');
    expect(store.runs.get(run.id)).toMatchObject({ state: 'failed', reason: 'reconciled: checked by the user' });
    await settle(() => view.container.textContent!.includes('Reconciled as failed'), 'the reconcile notice');
    expect(store.runs.activeFor(conversation.id)).toBeUndefined();
    await view.unmount();
    router.close();
  });

  it('test_follows_events_appended_after_it_subscribed_in_order_from_its_cursor', async () => {
    const { api, core, service } = realApi();
    const { store, conversation } = seed(core, 'Live');
    store.journal.append(conversation.id, { type: 'user_prompt', payload: { text: 'first question' } });
    const router = new PushRouter(api);
    const view = await render(<ChatView api={api} router={router} namespace="default" conversationId={conversation.id} approvals={[]} onOpenLink={() => undefined} />);
    await settle(() => view.container.textContent!.includes('first question'), 'the replay');
    store.journal.append(conversation.id, { type: 'assistant_text', payload: { text: 'first answer' } });
    await settle(() => view.container.textContent!.includes('first answer'), 'the live event');
    expect(service.subscriptionCount()).toBe(1);
    await view.unmount();
    // Leaving the chat ends its subscription in main.
    await settle(() => service.subscriptionCount() === 0, 'the unsubscribe');
    router.close();
  });
});
