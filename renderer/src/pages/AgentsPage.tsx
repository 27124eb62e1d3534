/**
 * The agent editor: instructions, which pinned tools stay, and which tools of the namespace's
 * connections to add; publishing makes a new immutable version. Main contacts the connection when
 * pinning, so a refusal (server down, tool turned off, schema changed) arrives as a typed error.
 */
import { useCallback, useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { PermissionKind } from '../../../common/events.js';
import type { AgentView, ConnectionView } from '../../../common/views.js';
import { unwrap } from '../api.js';
import { PageNotice, usePageNotice } from '../components/PageNotice.js';

const KINDS: readonly { kind: PermissionKind; hint: string }[] = [
  { kind: 'read', hint: 'folders or files, e.g. ~/notes or /srv/data' },
  { kind: 'write', hint: 'folders or files' },
  { kind: 'net', hint: 'hosts, e.g. api.github.com or example.com:8443' },
  { kind: 'run', hint: 'commands, e.g. git,npm' },
  { kind: 'env', hint: 'variable names, e.g. HOME' },
  { kind: 'mcp', hint: 'server/tool, e.g. github/list_issues' },
];

/** "1 tool", "3 tools". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** `set` with every one of `items` added (on) or removed (off). */
function setAll(set: ReadonlySet<string>, items: readonly string[], on: boolean): ReadonlySet<string> {
  const next = new Set(set);
  for (const item of items) {
    if (on) next.add(item);
    else next.delete(item);
  }
  return next;
}

export function AgentsPage({ api, namespace }: { api: WardApi; namespace: string }) {
  const [agents, setAgents] = useState<AgentView[]>([]);
  const [selected, setSelected] = useState<AgentView | null>(null);
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const [keep, setKeep] = useState<ReadonlySet<string>>(new Set());
  const [notice, say] = usePageNotice();
  const [effect, setEffect] = useState<'allow' | 'deny'>('allow');
  const [kind, setKind] = useState<PermissionKind>('read');
  const [entries, setEntries] = useState('');
  const [connections, setConnections] = useState<ConnectionView[]>([]);
  /** Checked connection tools, as `CONNECTION/TOOL` selectors. */
  const [add, setAdd] = useState<ReadonlySet<string>>(new Set());

  const load = useCallback(
    () =>
      unwrap(api.agents.list({ namespace }))
        .then(setAgents)
        .catch(say.fail),
    [api, namespace],
  );
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    unwrap(api.connections.list({ namespace }))
      .then(setConnections)
      .catch(say.fail);
  }, [api, namespace]);

  const edit = (agent: AgentView) => {
    setSelected(agent);
    setName(agent.name);
    setInstructions(agent.instructions);
    setKeep(new Set(agent.tools.map((tool) => tool.name)));
    setAdd(new Set());
    say.clear();
  };
  const flip = (set: ReadonlySet<string>, item: string) => setAll(set, [item], !set.has(item));
  const publish = async () => {
    try {
      const published = await unwrap(api.agents.publish({ namespace, name: name.trim(), instructions, keepTools: [...keep], addTools: [...add] }));
      edit(published);
      say.info(`Published ${published.name} version ${published.version}`);
      await load();
    } catch (failure) {
      say.fail(failure);
    }
  };
  const tools = selected !== null && selected.name === name.trim() ? selected.tools : [];
  const pinned = new Set(tools.map((tool) => tool.name));
  // The window lists exposed names (`CONNECTION__TOOL`); publishing takes `CONNECTION/TOOL`.
  const offered = connections
    .map((connection) => ({
      connection,
      tools: connection.tools.filter((exposed) => exposed.startsWith(`${connection.name}__`) && !pinned.has(exposed)).map((exposed) => exposed.slice(connection.name.length + 2)),
    }))
    .filter((entry) => entry.tools.length > 0);
  /** True when it went through; a refused grant keeps what was typed, to be corrected. */
  const changePermissions = async (action: () => Promise<AgentView>, done: string): Promise<boolean> => {
    try {
      setSelected(await action());
      say.info(done);
      await load();
      return true;
    } catch (failure) {
      say.fail(failure);
      return false;
    }
  };

  return (
    <section className="page" aria-label="Agents">
      <h2>Agents</h2>
      <ul className="plain-list">
        {agents.map((agent) => (
          <li key={agent.name}>
            <button type="button" className="link-button" onClick={() => edit(agent)}>
              {agent.name}
            </button>{' '}
            <span className="muted">
              v{agent.version} · {plural(agent.tools.length, 'tool')} · model profile {agent.modelProfile}
            </span>
          </li>
        ))}
        {agents.length === 0 && <li className="muted">No agents yet.</li>}
      </ul>
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          void publish();
        }}
      >
        <h3>Edit and publish</h3>
        <label>
          Name
          <input value={name} onChange={(event) => setName(event.target.value)} placeholder="research-helper" required />
        </label>
        <label>
          Instructions
          <textarea value={instructions} onChange={(event) => setInstructions(event.target.value)} rows={6} />
        </label>
        <fieldset>
          <legend>Tools pinned in this agent</legend>
          {tools.length === 0 && <p className="muted">No pinned tools yet.</p>}
          {tools.map((tool) => (
            <label key={tool.name} className="checkbox">
              <input type="checkbox" checked={keep.has(tool.name)} onChange={() => setKeep(flip(keep, tool.name))} /> <code>{tool.name}</code>{' '}
              <span className="muted">
                from {tool.upstream}
                {tool.description ? ` — ${tool.description}` : ''}
              </span>
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Add tools from connections</legend>
          {offered.length === 0 && <p className="muted">No connection offers tools this agent lacks. Add and check one on the Connections page.</p>}
          {offered.map(({ connection, tools: names }) => {
            const choices = names.map((tool) => ({ tool, selector: `${connection.name}/${tool}` }));
            const selectors = choices.map((choice) => choice.selector);
            const all = selectors.every((selector) => add.has(selector));
            return (
              <fieldset key={connection.name} className="connection-choice">
                <legend>{connection.name}</legend>
                <label className="checkbox">
                  <input type="checkbox" checked={all} onChange={() => setAdd(setAll(add, selectors, !all))} /> every tool of {connection.name}
                </label>
                {choices.map(({ tool, selector }) => (
                  <label key={selector} className="checkbox">
                    <input type="checkbox" checked={add.has(selector)} onChange={() => setAdd(flip(add, selector))} /> <code>{tool}</code>{' '}
                    <span className="muted">from {connection.name}</span>
                  </label>
                ))}
              </fieldset>
            );
          })}
        </fieldset>
        <button type="submit" className="primary">
          Publish new version
        </button>
      </form>
      {selected !== null && (
        <section className="form" aria-label="Permissions">
          <h3>Permissions of {selected.name} (every conversation)</h3>
          <ul className="plain-list">
            {selected.permissions.map((grant) => (
              <li key={grant.id} data-testid="agent-permission">
                <code>
                  {grant.effect} {grant.kind} {grant.value}
                </code>{' '}
                <button
                  type="button"
                  className="link-button"
                  onClick={() => void changePermissions(() => unwrap(api.agents.revokeGrant({ namespace, name: selected.name, grantId: grant.id })), `Revoked ${grant.kind} ${grant.value}`)}
                >
                  Revoke
                </button>
              </li>
            ))}
            {selected.permissions.length === 0 && <li className="muted">None: the agent is asked about anything beyond its pinned tools.</li>}
          </ul>
          <form
            className="row"
            onSubmit={(event) => {
              event.preventDefault();
              void changePermissions(() => unwrap(api.agents.grant({ namespace, name: selected.name, effect, kind, entries })), `Granted ${effect} ${kind}`).then((granted) => {
                if (granted) setEntries('');
              });
            }}
          >
            <select aria-label="Allow or deny" value={effect} onChange={(event) => setEffect(event.target.value as 'allow' | 'deny')}>
              <option value="allow">allow</option>
              <option value="deny">deny</option>
            </select>
            <select aria-label="Kind" value={kind} onChange={(event) => setKind(event.target.value as PermissionKind)}>
              {KINDS.map((entry) => (
                <option key={entry.kind} value={entry.kind}>
                  {entry.kind}
                </option>
              ))}
            </select>
            <input aria-label="Entries" value={entries} onChange={(event) => setEntries(event.target.value)} placeholder={KINDS.find((entry) => entry.kind === kind)!.hint} required />
            <button type="submit">Grant</button>
          </form>
        </section>
      )}
      <PageNotice notice={notice} />
    </section>
  );
}
