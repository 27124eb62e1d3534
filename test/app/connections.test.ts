import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WardApp } from '../../main/app/ward-app.js';
import { harness, stdioSpec } from '../connections/support.js';

describe('connections in the desktop window', () => {
  it('test_shows_health_enabled_tools_and_re_pin_reasons_and_no_secret_value', async () => {
    const h = harness();
    const canary = `window-canary-${Date.now()}`;
    const toolsFile = path.join(h.dir, 'tools.json');
    const tool = (properties: object) => [
      { name: 'echo', description: 'Echoes', inputSchema: { type: 'object', properties } },
      { name: 'other', description: 'Other', inputSchema: { type: 'object', properties: {} } },
    ];
    fs.writeFileSync(toolsFile, JSON.stringify(tool({ text: { type: 'string' } })));
    await h.manager.add({ ...stdioSpec('files', '--tools-file', toolsFile), secretEnv: ['API_TOKEN'] }, { API_TOKEN: canary });
    await h.manager.add({ transport: 'http', name: 'remote', url: 'https://mcp.example.invalid/mcp' });
    await h.manager.discover('files');
    fs.writeFileSync(toolsFile, JSON.stringify(tool({ text: { type: 'number' } })));
    await h.manager.disconnect('files');
    await h.manager.discover('files');
    h.core.store(h.ns).db.prepare("UPDATE connections SET health = 'not_signed_in', last_error_code = 'not_signed_in' WHERE name = 'remote'").run();

    const app = new WardApp({ folder: h.core, env: {}, policy: null, connectionStore: { kind: 'keychain' } });
    const views = await (await app.connections()).windowViews(h.core.store(h.ns));
    expect(views).toEqual([
      {
        id: 'files',
        name: 'files',
        url: expect.stringContaining('stdio-server.mjs --tools-file'),
        status: 'signed_in',
        detail: null,
        tools: ['files__other'],
        pins: [
          { name: 'echo', exposedName: 'files__echo', description: expect.any(String), enabled: true, status: 'schema_changed' },
          { name: 'other', exposedName: 'files__other', description: expect.any(String), enabled: true, status: 'pinned' },
        ],
        managedBy: null,
      },
      { id: 'remote', name: 'remote', url: 'https://mcp.example.invalid/mcp', status: 'signed_out', detail: expect.stringMatching(/^Sign in again \("ward --namespace \S+ connections login remote"\)\.$/), tools: [], pins: [], managedBy: null },
    ]);
    expect(JSON.stringify(views)).not.toContain(canary);
  });

  it('test_s5_a_sandboxed_servers_profile_is_in_its_detail', async () => {
    const h = harness();
    await h.manager.add({ ...stdioSpec('files'), sandbox: { net: ['docs.example.com', '127.0.0.1:8080'], folder: null } });
    const app = new WardApp({ folder: h.core, env: {}, policy: null, connectionStore: { kind: 'keychain' } });
    const [view] = await (await app.connections()).windowViews(h.core.store(h.ns));
    expect(view?.detail).toBe('Runs in the sandbox: network only docs.example.com, 127.0.0.1:8080; files: a private folder of its own (read-write).');
  });
});
