import { describe, expect, it } from 'vitest';
import { WardApp } from '../../main/app/ward-app.js';
import { parsePolicy } from '../../main/policy/policy.js';
import { harness } from '../connections/support.js';

function appWith(policy: object) {
  const h = harness();
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
