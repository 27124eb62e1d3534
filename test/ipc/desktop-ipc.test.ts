import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PushedEvent } from '../../preload/contract.js';
import type { JournalEventView } from '../../common/views.js';
import { journalEvent } from '../../common/events.js';
import { DesktopIpc, MAX_SUBSCRIPTIONS_PER_CLIENT } from '../../main/ipc/handlers.js';
import { WardApp } from '../../main/app/ward-app.js';
import { desktopIpcFor } from '../support/desktop.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { dispatch } from '../../main/ipc/dispatch.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { tempDir } from '../support/temp.js';

function setup() {
  const core = new DataFolder(tempDir('ward-app-'));
  const store = core.store(parseNamespace('default'));
  const agent = store.agents.publish('helper', { instructions: '' });
  const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'paged' });
  const pushes: PushedEvent[] = [];
  const client = { id: 'window-1', push: (event: PushedEvent) => pushes.push(event) };
  return { core, store, conversation, service: desktopIpcFor(core), pushes, client };
}

const seqs = (pushes: PushedEvent[]) => pushes.flatMap((push) => (push.kind === 'journal' ? push.events.map((event: JournalEventView) => event.seq) : []));
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('journal subscription from a cursor (J1)', () => {
  it('test_replays_in_pages_then_follows_with_no_gap_or_duplicate_even_when_events_land_mid_replay', async () => {
    const { core, store, conversation, service, pushes, client } = setup();
    store.journal.appendMany(conversation.id, Array.from({ length: 2_500 }, (_, i) => ({ type: 'assistant_text', payload: { text: `m${i}` } })));
    const result = await dispatch(service.handlers, client, 'journal.subscribe', { namespace: 'default', conversationId: conversation.id, afterSeq: 200 });
    expect(result).toMatchObject({ ok: true, value: { subscriptionId: expect.any(String) } });
    expect(pushes).toHaveLength(0);
    await tick();
    // An append between the first and second page.
    store.journal.append(conversation.id, { type: 'assistant_text', payload: { text: 'during replay' } });
    for (let i = 0; i < 10; i++) await tick();
    store.journal.append(conversation.id, { type: 'assistant_text', payload: { text: 'live' } });
    for (let i = 0; i < 3; i++) await tick();
    // A small first page (enough to paint), then pages of 1,000 (the last one already holds the
    // event that landed mid-replay), then live.
    expect(pushes.map((push) => (push.kind === 'journal' ? push.events.length : -1))).toEqual([100, 1_000, 1_000, 201, 1]);
    expect(seqs(pushes)).toEqual(Array.from({ length: 2_302 }, (_, i) => 201 + i));
    core.close();
  });

  it('test_ends_a_windows_subscriptions_when_it_goes_away_and_bounds_how_many_it_may_hold', async () => {
    const { core, conversation, service, pushes, client } = setup();
    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_CLIENT; i++) {
      await dispatch(service.handlers, client, 'journal.subscribe', { namespace: 'default', conversationId: conversation.id, afterSeq: 0 });
    }
    await expect(dispatch(service.handlers, client, 'journal.subscribe', { namespace: 'default', conversationId: conversation.id, afterSeq: 0 })).resolves.toEqual({
      ok: false,
      error: { code: 'usage', message: `this window already holds ${MAX_SUBSCRIPTIONS_PER_CLIENT} subscriptions; unsubscribe before adding more` },
    });
    service.releaseClient(client.id);
    expect(service.subscriptionCount()).toBe(0);
    core.store(parseNamespace('default')).journal.append(conversation.id, { type: 'assistant_text', payload: { text: 'after' } });
    await tick();
    await tick();
    expect(pushes).toHaveLength(0);
    core.close();
  });

  it('test_never_lets_another_window_end_a_subscription_it_does_not_hold', async () => {
    const { core, conversation, service, client } = setup();
    const result = await dispatch(service.handlers, client, 'journal.subscribe', { namespace: 'default', conversationId: conversation.id, afterSeq: 0 });
    const id = (result as { value: { subscriptionId: string } }).value.subscriptionId;
    await expect(dispatch(service.handlers, { id: 'window-2', push: () => undefined }, 'journal.unsubscribe', { subscriptionId: id })).resolves.toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(service.subscriptionCount()).toBe(1);
    service.releaseClient(client.id);
    core.close();
  });
});

describe('what leaves main', () => {
  it('test_sends_each_journal_event_parsed_by_its_schema_credential_like_tool_arguments_redacted_at_any_depth_an_event_that_does_not_parse_without_its_payload', async () => {
    const { core, store, conversation, service, pushes, client } = setup();
    const args = { text: 'hi', headers: { Authorization: 'Bearer x', accept: 'json' }, list: [{ api_key: 'k', token: 't' }], capability: 'c' };
    store.journal.appendMany(conversation.id, [
      journalEvent('tool_call', { toolUseId: 'toolu_1', tool: 'fetch', arguments: args }),
      // Old or foreign data: a field no producer writes, and a type nothing emits.
      { type: 'tool_refused', payload: { tool: 'fetch', reason: 'no', authorization: 'Bearer leaked' } },
      { type: 'stop_requested', payload: { token: 'leaked' } },
    ]);
    await dispatch(service.handlers, client, 'journal.subscribe', { namespace: 'default', conversationId: conversation.id, afterSeq: 0 });
    for (let i = 0; i < 3; i++) await tick();
    const events = pushes.flatMap((push) => (push.kind === 'journal' ? push.events : []));
    expect(events.map(({ seq, runId, type, payload }) => ({ seq, runId, type, payload }))).toEqual([
      {
        seq: 1,
        runId: null,
        type: 'tool_call',
        payload: {
          toolUseId: 'toolu_1',
          tool: 'fetch',
          arguments: { text: 'hi', headers: { Authorization: '[redacted]', accept: 'json' }, list: [{ api_key: '[redacted]', token: '[redacted]' }], capability: '[redacted]' },
        },
      },
      { seq: 2, runId: null, type: 'unreadable', payload: { storedType: 'tool_refused', problem: expect.stringContaining('authorization') } },
      { seq: 3, runId: null, type: 'unreadable', payload: { storedType: 'stop_requested', problem: 'no event of this type is written by Ward' } },
    ]);
    expect(JSON.stringify(events)).not.toContain('leaked');
    core.close();
  });

  it('test_names_the_conversations_unknown_namespace_and_malformed_input_precisely', async () => {
    const { core, service, client } = setup();
    await expect(dispatch(service.handlers, client, 'conversations.list', { namespace: 'nope' })).resolves.toEqual({
      ok: false,
      error: { code: 'namespace_not_found', message: 'There is no namespace nope: choose another in the namespace list.' },
    });
    await expect(dispatch(service.handlers, client, 'runs.reconcile', { namespace: 'default', runId: '00000000-0000-4000-8000-000000000000', outcome: 'running', note: 'x' })).resolves.toMatchObject({
      ok: false,
      error: { code: 'invalid_payload', message: expect.stringMatching(/^runs\.reconcile: payload\.outcome: /) },
    });
    await expect(dispatch(service.handlers, client, 'runs.send', { namespace: 'default', conversationId: '00000000-0000-4000-8000-000000000000', requestId: '00000000-0000-4000-8000-000000000001', prompt: 'x' })).resolves.toEqual({
      ok: false,
      error: { code: 'not_found', message: 'no conversation 00000000-0000-4000-8000-000000000000 in this namespace' },
    });
    // The desktop has no working folder: `~/` is the home folder, `./x` is refused by name instead of resolved against wherever Ward runs.
    await expect(dispatch(service.handlers, client, 'connections.addLocal', { namespace: 'default', name: 'files', command: 'node', args: ['./server.js'], secrets: [] })).resolves.toEqual({
      ok: false,
      error: { code: 'usage', message: `argument 1 "./server.js" is a relative path and the desktop has no folder to resolve it in: give its full path (like ${path.join(os.homedir(), 'server.js')})` },
    });
    await expect(dispatch(service.handlers, client, 'connections.addLocal', { namespace: 'default', name: 'files', command: 'node', args: [], secrets: [], sandbox: { net: [], folder: '../data' } })).resolves.toMatchObject({
      ok: false,
      error: { code: 'usage', message: expect.stringMatching(/^the folder "\.\.\/data" is a relative path/) },
    });
    await expect(dispatch(service.handlers, client, 'connections.addLocal', { namespace: 'default', name: 'files', command: '~/bin/mcp-files', args: ['--root', '~/projects'], secrets: [] })).resolves.toMatchObject({
      ok: true,
      value: { name: 'files', url: `${path.join(os.homedir(), 'bin/mcp-files')} --root ${path.join(os.homedir(), 'projects')}` },
    });
    await expect(dispatch(service.handlers, client, 'runs.prepare', { namespace: 'default', conversationId: '00000000-0000-4000-8000-000000000000' })).resolves.toEqual({
      ok: false,
      error: { code: 'not_found', message: 'no conversation 00000000-0000-4000-8000-000000000000 in this namespace' },
    });
    core.close();
  });
});

describe('a chat that would be refused is not created (issue 16 #7)', () => {
  it('test_without_a_model_key_new_chat_and_send_are_refused_in_the_setup_cards_words_never_a_terminal_command_and_nothing_is_created', async () => {
    const home = tempDir('ward-desktop-preflight-');
    fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ credentialStore: 'file' }));
    const core = new DataFolder(home);
    const app = new WardApp({ folder: core, env: {}, policy: null, run: { warmSessions: true } });
    const service = new DesktopIpc(app);
    const client = { id: 'window-1', push: () => undefined };
    const refusal = {
      ok: false,
      error: { code: 'model_key_missing', message: 'Ward has no usable model key for this namespace yet.' },
    };
    try {
      await expect(dispatch(service.handlers, client, 'conversations.start', { namespace: 'default', agentName: 'default', prompt: 'hello', requestId: '00000000-0000-4000-8000-000000000002' })).resolves.toEqual(refusal);
      await expect(dispatch(service.handlers, client, 'conversations.list', { namespace: 'default' })).resolves.toEqual({ ok: true, value: [] });
      // A chat made before the key was deleted: the prompt is refused and no run is admitted.
      const store = core.store(parseNamespace('default'));
      const agent = store.agents.publish('helper', { instructions: '' });
      const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'older' });
      await expect(dispatch(service.handlers, client, 'runs.send', { namespace: 'default', conversationId: conversation.id, requestId: '00000000-0000-4000-8000-000000000001', prompt: 'again' })).resolves.toEqual(refusal);
      // Writing in it starts no CLI ahead either; the refusal is the same (the window ignores it, Send shows it).
      await expect(dispatch(service.handlers, client, 'runs.prepare', { namespace: 'default', conversationId: conversation.id })).resolves.toEqual(refusal);
      expect(store.runs.activeFor(conversation.id)).toBeUndefined();
      expect(store.journal.lastSeq(conversation.id)).toBe(0);
      // The window knows to show its setup card: no key stored, none in Ward's environment.
      await expect(dispatch(service.handlers, client, 'settings.get', { namespace: 'default' })).resolves.toMatchObject({ ok: true, value: { keySet: false, environmentKey: false } });
    } finally {
      await app.close();
      core.close();
    }
  });
});
