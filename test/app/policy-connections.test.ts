import { describe, expect, it } from 'vitest';
import { WardApp } from '../../main/app/ward-app.js';
import { DesktopIpc } from '../../main/ipc/handlers.js';
import { dispatch } from '../../main/ipc/dispatch.js';
import { parsePolicy } from '../../main/policy/policy.js';
import { harness, STDIO_SERVER, stdioSpec } from '../connections/support.js';

function appWith(policy: object, h = harness()) {
  const app = new WardApp({ folder: h.core, env: {}, policy: parsePolicy(JSON.stringify(policy), '/etc/ward/policy.json'), connectionStore: { kind: 'keychain' } });
  return { h, app, store: h.core.store(h.ns) };
}

describe('admin policy: connections are matched by what they are', () => {
  // Before: a policy listing "github" was met by any server the user named github.
  it('test_a_connection_the_user_names_like_an_allowed_one_is_refused_when_its_url_differs', async () => {
    const { app, store } = appWith({ allowedConnections: ['https://mcp.github.example/*'] });
    const connections = await app.connections();
    await expect(connections.add(store, { transport: 'http', name: 'github', url: 'https://mcp.evil.example/mcp' })).rejects.toMatchObject({
      code: 'policy_refused',
      message: 'connection "github" ("https://mcp.evil.example/mcp") is not allowed: it matches no allowedConnections entry: refused by the admin policy (/etc/ward/policy.json)',
    });
    const added = await connections.add(store, { transport: 'http', name: 'code', url: 'https://mcp.github.example/mcp' });
    expect(added.spec.name).toBe('code');
  });

  it('test_managed_connections_appear_in_every_namespace_locked_and_cannot_be_removed', async () => {
    const { app, store } = appWith({ managedConnections: [{ name: 'tracker', url: 'https://mcp.example.com/mcp' }], managedConnectionsOnly: true });
    const connections = await app.connections();
    expect(await connections.windowViews(store)).toEqual([expect.objectContaining({ name: 'tracker', url: 'https://mcp.example.com/mcp', managedBy: '/etc/ward/policy.json: managedConnections' })]);
    await expect(connections.remove(store, 'tracker')).rejects.toMatchObject({ code: 'policy_refused', message: expect.stringContaining('connection tracker is managed by your organization') });
    // Only the managed ones may be added or used.
    await expect(connections.add(store, { transport: 'http', name: 'other', url: 'https://mcp.other.example/mcp' })).rejects.toMatchObject({ message: expect.stringContaining('only the managed connections may be used (managedConnectionsOnly)') });
  });
});

describe('admin policy: the desktop keeps a managed connection\'s lock', () => {
  // Before: Check, Sign in and Sign out answered without "Managed by", so the card lost its lock note until a reload.
  it('test_checking_a_managed_connection_from_the_desktop_still_says_who_manages_it', async () => {
    const { app, store } = appWith({ managedConnections: [{ name: 'files', command: process.execPath, args: [STDIO_SERVER] }] });
    try {
      const ipc = new DesktopIpc(app);
      const client = { id: 'window-1', push: () => undefined };
      const checked = await dispatch(ipc.handlers, client, 'connections.check', { namespace: store.namespace.name, name: 'files' });
      expect(checked).toMatchObject({ ok: true, value: { name: 'files', managedBy: '/etc/ward/policy.json: managedConnections' } });
    } finally {
      await app.close();
    }
  });
});

describe('admin policy: local servers only in the OS sandbox (localServersSandboxed)', () => {
  const POLICY = 'refused by the admin policy (/etc/ward/policy.json)';

  it('test_a_local_server_without_the_sandbox_is_refused_when_added_and_one_added_before_does_not_start', async () => {
    // Added before the policy arrived, without --sandbox.
    const { h } = appWith({});
    const before = new WardApp({ folder: h.core, env: {}, policy: null, connectionStore: { kind: 'keychain' } });
    await (await before.connections()).add(h.core.store(h.ns), stdioSpec('plain'));
    await before.close();

    const app = new WardApp({ folder: h.core, env: {}, policy: parsePolicy(JSON.stringify({ localServersSandboxed: true }), '/etc/ward/policy.json'), connectionStore: { kind: 'keychain' } });
    try {
      const connections = await app.connections();
      const store = h.core.store(h.ns);
      await expect(connections.add(store, stdioSpec('other'))).rejects.toMatchObject({
        code: 'policy_refused',
        message: expect.stringMatching(/^connection "other" \(.*\) is not allowed: local servers run only inside the OS sandbox \(localServersSandboxed\): add it to run there \("ward connections add NAME --command … --sandbox/),
      });
      // With a sandbox profile it is added; a remote server is not a local one.
      await expect(connections.add(store, { ...stdioSpec('boxed'), sandbox: { net: [] } })).resolves.toMatchObject({ spec: { name: 'boxed', sandbox: { net: [] } } });
      await expect(connections.add(store, { transport: 'http', name: 'remote', url: 'https://mcp.example.com/mcp' })).resolves.toMatchObject({ spec: { name: 'remote' } });
      // The one added before is not started: checking it says why, and whatever reaches it is refused before it starts.
      await expect(connections.check(store, 'plain')).rejects.toMatchObject({ code: 'policy_refused', message: expect.stringContaining('connection "plain"') });
      await expect(connections.use(store, (manager) => manager.discover('plain'))).rejects.toMatchObject({
        message: expect.stringContaining(`connection plain: ${POLICY}: local servers run only inside the OS sandbox (localServersSandboxed): add it to run there ("ward connections add NAME --command … --sandbox [--sandbox-net=HOST,…]", or "Run it in the OS sandbox" on the Connections page); the server was not started`),
      });
    } finally {
      await app.close();
    }
  });

  it('test_a_managed_local_server_comes_with_its_sandbox_and_an_agents_inline_server_is_refused_before_a_run', async () => {
    const { app, store } = appWith({ localServersSandboxed: true, managedConnections: [{ name: 'files', command: process.execPath, args: [STDIO_SERVER], sandbox: { net: ['api.example.com'] } }] });
    try {
      const connections = await app.connections();
      const [files] = await connections.windowViews(store);
      expect(files).toMatchObject({ name: 'files', managedBy: '/etc/ward/policy.json: managedConnections' });
      expect(files!.detail).toContain('Runs in the sandbox: network only api.example.com');

      store.agents.publish('helper', { instructions: '', upstreams: { inline: { type: 'stdio', command: '/usr/bin/true' } } });
      await expect((await app.runs()).preflight({ namespace: store.namespace, agent: 'helper', prompt: 'hi' })).rejects.toMatchObject({
        code: 'policy_refused',
        message: expect.stringContaining('connection "inline" ("/usr/bin/true") is not allowed: local servers run only inside the OS sandbox'),
      });
    } finally {
      await app.close();
    }
  });

  it('test_a_sandbox_the_admin_adds_to_a_managed_local_server_later_applies_to_users_who_have_it_already', async () => {
    const server = { name: 'files', command: process.execPath, args: [STDIO_SERVER] };
    const before = appWith({ managedConnections: [server] });
    try {
      const [files] = await (await before.app.connections()).windowViews(before.store);
      expect(files!.detail ?? '').not.toContain('Runs in the sandbox');
    } finally {
      await before.app.close();
    }
    // The next policy confines it: the copy each user already has follows, not only new users'.
    const after = appWith({ managedConnections: [{ ...server, sandbox: { net: ['api.example.com'] } }] }, before.h);
    try {
      // A run opens the namespace's connections this way, with no view opened first.
      const manager = (await after.app.connections()).open(after.store.namespace);
      expect(manager.registry.get('files').spec).toMatchObject({ sandbox: { net: ['api.example.com'], folder: null } });
      await manager.close();
      const [files] = await (await after.app.connections()).windowViews(after.store);
      expect(files!.detail).toContain('Runs in the sandbox: network only api.example.com');
      expect(after.store.db.prepare("SELECT sandbox FROM connections WHERE name = 'files'").get()).toEqual({ sandbox: JSON.stringify({ net: ['api.example.com'], folder: null }) });
    } finally {
      await after.app.close();
    }
    // A namesake of the user's (another command) is theirs: the policy's sandbox is not written onto it.
    const own = appWith({}, harness());
    try {
      const connections = await own.app.connections();
      await connections.add(own.store, stdioSpec('files'));
    } finally {
      await own.app.close();
    }
    const managed = appWith({ managedConnections: [{ name: 'files', command: '/usr/bin/true', args: [], sandbox: { net: [] } }] }, own.h);
    try {
      const [files] = await (await managed.app.connections()).windowViews(managed.store);
      expect(files).toMatchObject({ managedBy: null });
      expect(files!.detail ?? '').not.toContain('Runs in the sandbox');
    } finally {
      await managed.app.close();
    }
  });
});
