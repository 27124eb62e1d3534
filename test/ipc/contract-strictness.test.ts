/** U2: every channel refuses a payload with a key the contract does not name, and every call is checked for its sender first. */
import { describe, expect, it } from 'vitest';
import { CHANNEL_NAMES, CONTRACT, type ChannelName, type Payload } from '../../preload/contract.js';
import { APP_ENTRY } from '../../main/ipc/sender.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { tempDir } from '../support/temp.js';
import { desktopIpcFor } from '../support/desktop.js';

const NS = { namespace: 'default' };
const ID = '00000000-0000-4000-8000-000000000000';
/** One valid payload per channel; a new channel without one does not compile. */
const EXAMPLES: { readonly [C in ChannelName]: Payload<C> } = {
  'namespaces.list': {},
  'namespaces.create': { name: 'work' },
  'conversations.list': { ...NS },
  'conversations.get': { ...NS, conversationId: ID },
  'conversations.start': { ...NS, agentName: 'default', prompt: 'hi', requestId: '00000000-0000-4000-8000-000000000001' },
  'journal.subscribe': { ...NS, conversationId: ID, afterSeq: 0 },
  'journal.unsubscribe': { subscriptionId: 'abc' },
  'runs.send': { ...NS, conversationId: ID, requestId: ID, prompt: 'hi' },
  'runs.prepare': { ...NS, conversationId: ID },
  'runs.stop': { ...NS, runId: ID },
  'runs.reconcile': { ...NS, runId: ID, outcome: 'failed', note: 'checked' },
  'changes.open': { ...NS, conversationId: ID, seq: 3 },
  'changes.diff': { ...NS, conversationId: ID, seq: 3, index: 0 },
  'changes.rewind': { ...NS, conversationId: ID, to: '3', force: false },
  'approvals.list': { ...NS },
  'approvals.answer': { ...NS, approvalId: 'a1', answer: 'deny' },
  'approvals.watch': { ...NS },
  'elicitations.answer': { ...NS, elicitationId: 'e1', action: 'accept', content: { name: 'Ada', age: 36, ok: true, tags: ['a'] } },
  'agents.list': { ...NS },
  'agents.publish': { ...NS, name: 'helper', instructions: '', keepTools: [] },
  'agents.grant': { ...NS, name: 'helper', effect: 'allow', kind: 'read', entries: '/tmp' },
  'agents.revokeGrant': { ...NS, name: 'helper', grantId: 'grant-0001' },
  'connections.list': { ...NS },
  'connections.add': { ...NS, name: 'remote', url: 'https://mcp.example.com/mcp' },
  'connections.addLocal': { ...NS, name: 'local', command: 'node', args: ['server.js'], secrets: [] },
  'connections.check': { ...NS, name: 'remote' },
  'connections.changeTool': { ...NS, name: 'remote', action: 'disable', tool: 'remote__echo' },
  'connections.signIn': { ...NS, name: 'remote' },
  'connections.signOut': { ...NS, name: 'remote' },
  'connections.remove': { ...NS, name: 'remote' },
  'settings.get': { ...NS },
  'settings.setModelProvider': { ...NS, baseUrl: 'https://api.anthropic.com', model: 'claude-sonnet-4-5' },
  'settings.setKey': { ...NS, key: 'sk-ant-example-key' },
  'settings.clearKey': { ...NS },
  'policy.get': {},
  'settings.testProvider': { ...NS },
  'search.query': { ...NS, query: 'lisbon' },
  'usage.summary': { ...NS, since: '2026-01-01' },
  'review.open': {},
  'review.get': { reviewId: ID },
  'review.events': { reviewId: ID, page: 0 },
  'links.openExternal': { url: 'https://example.com' },
  'folders.pick': {},
};

describe('the IPC contract is strict (U2)', () => {
  it.each(CHANNEL_NAMES.map((name) => [name]))('test_%s_accepts_its_example_and_refuses_an_extra_key', async (name) => {
    expect(CONTRACT[name].payload.safeParse(EXAMPLES[name]).success).toBe(true);
    const ipc = desktopIpcFor(new DataFolder(tempDir()));
    const result = await ipc.invokeFrom({ windowKnown: true, isTopFrame: true, frameUrl: APP_ENTRY }, { id: 'w', push: () => undefined }, name, { ...EXAMPLES[name], injected: true });
    expect(result).toMatchObject({ ok: false, error: { code: 'invalid_payload', message: expect.stringContaining('injected') } });
  });

  it('test_the_sender_is_checked_before_the_channel_or_payload_in_the_wiring_electron_uses', async () => {
    const ipc = desktopIpcFor(new DataFolder(tempDir()));
    const client = { id: 'w', push: () => undefined };
    const ours = { windowKnown: true, isTopFrame: true, frameUrl: APP_ENTRY };
    await expect(ipc.invokeFrom(ours, client, 'namespaces.list', {})).resolves.toEqual({ ok: true, value: [{ name: 'default' }] });
    for (const sender of [
      { ...ours, windowKnown: false },
      { ...ours, isTopFrame: false },
      { ...ours, frameUrl: 'https://evil.example/index.html' },
    ]) {
      await expect(ipc.invokeFrom(sender, client, 'namespaces.list', {})).resolves.toMatchObject({ ok: false, error: { code: 'forbidden_sender' } });
      // Refused before the payload is even looked at.
      await expect(ipc.invokeFrom(sender, client, 'no.such.channel', 42)).resolves.toMatchObject({ ok: false, error: { code: 'forbidden_sender' } });
    }
  });
});
