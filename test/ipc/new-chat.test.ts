/**
 * The desktop's New chat is one request: the conversation and its first turn, made by the same
 * app method `ward run --new` uses. A retried request (the same request id) attaches to what the
 * first made, so a retry never makes a second conversation (R7). Real CLI, scripted provider.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DesktopIpc } from '../../main/ipc/handlers.js';
import { dispatch } from '../../main/ipc/dispatch.js';
import { closeHarnessesAfterEach, startHarness, type Harness } from '../app/runs/harness.js';
import { tempDir } from '../support/temp.js';
import { until } from '../support/wait.js';

let harness: Harness | undefined;
closeHarnessesAfterEach();

const client = { id: 'window-1', push: () => undefined };
const REQUEST = '00000000-0000-4000-8000-0000000000aa';

describe('New chat (conversations.start)', () => {
  it('test_a_new_chat_sent_twice_with_the_same_request_id_makes_one_conversation_and_one_run', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'Hello once.' }] }]);
    const ipc = new DesktopIpc(harness.app);
    const chat = { namespace: 'default', agentName: 'default', prompt: 'Say hello\nand more', requestId: REQUEST };
    // Sent twice at once (a double click), then once more after the first answered (a retry).
    const both = await Promise.all([dispatch(ipc.handlers, client, 'conversations.start', chat), dispatch(ipc.handlers, client, 'conversations.start', chat)]);
    const values = both.map((result) => (result as { ok: true; value: { conversationId: string; runId: string; attached: boolean } }).value);
    expect(values.map((value) => value.attached).sort()).toEqual([false, true]);
    const started = values.find((value) => !value.attached)!;
    expect(values.find((value) => value.attached)).toMatchObject({ conversationId: started.conversationId, runId: started.runId });
    const store = harness.core.store(harness.ns);
    await until(() => store.runs.get(started.runId).state === 'succeeded', 'the first turn to succeed');
    const retried = await dispatch(ipc.handlers, client, 'conversations.start', chat);
    expect(retried).toMatchObject({ ok: true, value: { conversationId: started.conversationId, runId: started.runId, attached: true } });

    expect(store.conversations.list().map((conversation) => conversation.title)).toEqual(['Say hello']);
    expect(harness.provider.conversationRequests()).toHaveLength(1);
  });

  it('test_a_new_chat_with_a_project_folder_gets_its_access_as_chat_grants_and_a_refused_one_makes_nothing', async () => {
    harness = await startHarness([{ blocks: [{ type: 'text', text: 'ok' }] }]);
    const ipc = new DesktopIpc(harness.app);
    const project = tempDir('ward-project-');
    const started = await dispatch(ipc.handlers, client, 'conversations.start', { namespace: 'default', agentName: 'default', prompt: 'look', requestId: REQUEST, workspace: project, access: 'read' });
    expect(started).toMatchObject({ ok: true });
    const { conversationId } = (started as { value: { conversationId: string } }).value;
    const view = await dispatch(ipc.handlers, client, 'conversations.get', { namespace: 'default', conversationId });
    expect(view).toMatchObject({ ok: true, value: { workspace: fs.realpathSync(project), grants: [{ effect: 'allow', kind: 'read', value: fs.realpathSync(project), grantedBy: 'desktop:project-folder' }] } });

    // A project folder inside Ward's data is refused before anything is made.
    const inside = await dispatch(ipc.handlers, client, 'conversations.start', { namespace: 'default', agentName: 'default', prompt: 'again', requestId: '00000000-0000-4000-8000-0000000000bb', workspace: harness.home, access: 'write' });
    expect(inside).toMatchObject({ ok: false, error: { code: 'invalid_grant', message: expect.stringContaining("Ward's data") } });
    expect(harness.core.store(harness.ns).conversations.list()).toHaveLength(1);
  });
});
