/** The desktop agent editor (agents.publish over the IPC contract) pins tools from the namespace's connections. */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { desktopIpcFor } from '../support/desktop.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { openConnections } from '../../main/connections/index.js';
import { dispatch } from '../../main/ipc/dispatch.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { tempDir } from '../support/temp.js';
import { stdioSpec } from '../connections/support.js';

const cores: DataFolder[] = [];
afterEach(() => {
  for (const core of cores.splice(0)) core.close();
});

const client = { id: 'window-1', push: () => undefined };

async function setup() {
  const home = tempDir('ward-desktop-agent-');
  fs.writeFileSync(`${home}/settings.json`, JSON.stringify({ credentialStore: 'file' }));
  const core = new DataFolder(home);
  cores.push(core);
  const ns = parseNamespace('default');
  core.store(ns);
  const manager = openConnections(core, ns);
  await manager.add(stdioSpec('local'));
  await manager.discover('local');
  await manager.close();
  const service = desktopIpcFor(core);
  const publish = (payload: Record<string, unknown>) => dispatch(service.handlers, client, 'agents.publish', { namespace: 'default', name: 'helper', instructions: 'Use echo.', keepTools: [], ...payload });
  return { core, ns, publish };
}

describe('desktop agent editor with connection tools', () => {
  it('test_pins_connection_tool_with_addtools_keeps_it_on_republish_and_refuses_a_tool_that_is_off_or_unknown', async () => {
    const { core, ns, publish } = await setup();
    expect(await publish({ addTools: ['local/echo'] })).toMatchObject({ ok: true, value: { version: 1, tools: [{ name: 'local__echo', upstream: 'local', description: 'Echoes text' }] } });
    expect(await publish({ instructions: 'Still echo.', keepTools: ['local__echo'] })).toMatchObject({ ok: true, value: { version: 2, tools: [{ name: 'local__echo', upstream: 'local' }] } });
    const spec = core.store(ns).agents.get('helper', 2).spec as { tools: Array<Record<string, unknown>> };
    expect(spec.tools[0]).toMatchObject({ source: 'connection', connection: 'local', name: 'echo', schemaHash: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const manager = openConnections(core, ns);
    manager.setToolEnabled('local', 'big', false);
    await manager.close();
    expect(await publish({ addTools: ['local/big'] })).toMatchObject({ ok: false, error: { message: "Tool local/big is turned off: turn it on under local's tools on the Connections page." } });
    expect(await publish({ addTools: ['elsewhere/echo'] })).toMatchObject({ ok: false, error: { message: 'Tool elsewhere/echo: there is no connection named elsewhere; add one on the Connections page.' } });
    expect(core.store(ns).agents.find('helper')?.version).toBe(2);
  });
});
