import './dom-with-node-fetch.js';
import { afterEach, describe, expect, it } from 'vitest';
import { buildWardApi, type PushedEvent, type WardApi } from '../../preload/contract.js';
import { desktopIpcFor } from '../support/desktop.js';
import { DataFolder } from '../../main/store/data-folder.js';
import { dispatch } from '../../main/ipc/dispatch.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import { AgentsPage } from '../../renderer/src/pages/AgentsPage.js';
import { startHttpFixture, type HttpFixture } from '../fixtures/mcp-servers/http.js';
import { fixtureTools } from '../fixtures/mcp-servers/tools.js';
import { tempDir } from '../support/temp.js';
import { button, click, render, settle, typeInto } from './render.js';

/** Every tool the fixture server offers, in the order the page lists them. */
const FIXTURE_TOOLS = fixtureTools(1)
  .map((tool) => tool.name)
  .sort();

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** window.ward over the real app service (with the real connection registry), in-process. */
function realApi(): { api: WardApi; core: DataFolder } {
  const core = new DataFolder(tempDir('ward-ui-agents-'));
  cleanups.push(() => core.close());
  const service = desktopIpcFor(core);
  const client = { id: 'ui-test', push: (_event: PushedEvent) => undefined };
  const api = buildWardApi(
    (channel, payload) => dispatch(service.handlers, client, channel, payload),
    () => () => undefined,
  );
  return { api, core };
}

async function serverWithConnection(api: WardApi): Promise<HttpFixture> {
  const server = await startHttpFixture();
  cleanups.push(() => server.close());
  expect(await api.connections.add({ namespace: 'default', name: 'tracker', url: server.url })).toMatchObject({ ok: true });
  expect(await api.connections.check({ namespace: 'default', name: 'tracker' })).toMatchObject({ ok: true, value: { tools: expect.arrayContaining(['tracker__echo']) } });
  return server;
}

/** The checkbox whose label reads `label`, found the way assistive technology names it. */
function checkbox(container: HTMLElement, label: RegExp): HTMLInputElement {
  const found = [...container.querySelectorAll('label')].find((candidate) => label.test(candidate.textContent?.trim() ?? ''))?.querySelector('input[type=checkbox]');
  if (!(found instanceof HTMLInputElement)) throw new Error(`no checkbox labelled ${label}`);
  return found;
}

const nameField = (container: HTMLElement) => container.querySelector<HTMLInputElement>('input[placeholder=research-helper]')!;

describe('the agent editor adds tools from the namespace connections', () => {
  it('test_lists_each_connection_with_its_pinned_tools_as_labelled_checkboxes_the_checked_one_is_pinned_in_the_new_version', async () => {
    const { api, core } = realApi();
    await serverWithConnection(api);
    const view = await render(<AgentsPage api={api} namespace="default" />);
    cleanups.push(() => view.unmount());
    await settle(() => view.container.textContent!.includes('from tracker'), 'the connection tools');
    const group = view.container.querySelector('fieldset.connection-choice')!;
    expect(group.querySelector('legend')!.textContent).toBe('tracker');
    expect([...group.querySelectorAll('label')].map((label) => label.textContent?.trim())).toEqual([
      'every tool of tracker',
      ...FIXTURE_TOOLS.map((tool) => `${tool} from tracker`),
    ]);

    await typeInto(nameField(view.container), 'reader');
    await click(checkbox(view.container, /^echo from tracker$/));
    expect(checkbox(view.container, /^echo from tracker$/).checked).toBe(true);
    await click(button(view.container, 'Publish new version'));
    await settle(() => view.container.textContent!.includes('Published reader version 1'), 'the publish');

    const spec = core.store(parseNamespace('default')).agents.get('reader').spec as { tools: { exposedName: string; connection: string }[] };
    expect(spec.tools.map((tool) => tool.exposedName)).toEqual(['tracker__echo']);
    // The new version's pinned list shows it, and it is no longer offered as an addition.
    expect(checkbox(view.container, /^tracker__echo/).checked).toBe(true);
    expect(() => checkbox(view.container, /^echo from tracker$/)).toThrow();
  });

  it('test_checks_every_tool_of_a_connection_at_once_and_unchecks_them_again_then_pins_them_all', async () => {
    const { api, core } = realApi();
    await serverWithConnection(api);
    const view = await render(<AgentsPage api={api} namespace="default" />);
    cleanups.push(() => view.unmount());
    await settle(() => view.container.textContent!.includes('from tracker'), 'the connection tools');
    const tools = FIXTURE_TOOLS;
    const checked = () => tools.filter((tool) => checkbox(view.container, new RegExp(`^${tool} from tracker$`)).checked);

    await click(checkbox(view.container, /^every tool of tracker$/));
    expect(checked()).toEqual(tools);
    await click(checkbox(view.container, /^every tool of tracker$/));
    expect(checked()).toEqual([]);
    // One tool by hand leaves "every tool" unchecked; it then adds the rest.
    await click(checkbox(view.container, /^huge from tracker$/));
    expect(checkbox(view.container, /^every tool of tracker$/).checked).toBe(false);
    await click(checkbox(view.container, /^every tool of tracker$/));
    expect(checked()).toEqual(tools);

    await typeInto(nameField(view.container), 'everything');
    await click(button(view.container, 'Publish new version'));
    await settle(() => view.container.textContent!.includes('Published everything version 1'), 'the publish');
    const spec = core.store(parseNamespace('default')).agents.get('everything').spec as { tools: { exposedName: string }[] };
    expect(spec.tools.map((tool) => tool.exposedName).sort()).toEqual(tools.map((tool) => `tracker__${tool}`));
    expect(view.container.textContent).toContain('No connection offers tools this agent lacks.');
  });

  it('test_shows_the_typed_refusal_when_the_connection_cannot_be_reached_at_publish_time_and_publishes_nothing', async () => {
    const { api, core } = realApi();
    const server = await serverWithConnection(api);
    const view = await render(<AgentsPage api={api} namespace="default" />);
    cleanups.push(() => view.unmount());
    await settle(() => view.container.textContent!.includes('from tracker'), 'the connection tools');
    await server.close();

    await typeInto(nameField(view.container), 'reader');
    await click(checkbox(view.container, /^slow from tracker$/));
    await click(button(view.container, 'Publish new version'));
    await settle(() => view.container.querySelector('[role=alert]') !== null, 'the refusal');
    expect(view.container.querySelector('[role=alert]')!.textContent).toMatch(/^could not list the tools of connection tracker \(/);
    expect(core.store(parseNamespace('default')).agents.find('reader')).toBeUndefined();
  });
});
