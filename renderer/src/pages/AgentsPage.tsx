/**
 * The agent editor: instructions, which pinned tools stay, and which tools of the namespace's
 * connections to add; publishing makes a new immutable version. Main contacts the connection when
 * pinning, so a refusal (server down, tool turned off, schema changed) arrives as a typed error.
 */
import { useCallback, useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { AgentView, ConnectionView } from '../../../common/views.js';
import { errorText, unwrap } from '../api.js';
import { PageNotice, usePageNotice } from '../components/PageNotice.js';
import { AgentPermissions } from './AgentPermissions.js';
import { OfferedTools, offeredTools, PinnedTools } from './AgentToolChoices.js';

/** "1 tool", "3 tools". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The namespace's agents (`load` reads them again) and connections. */
function useAgentsAndConnections(api: WardApi, namespace: string, fail: (failure: unknown) => void) {
  const [agents, setAgents] = useState<AgentView[]>([]);
  const [connections, setConnections] = useState<ConnectionView[]>([]);
  const load = useCallback(
    () =>
      unwrap(api.agents.list({ namespace }))
        .then(setAgents)
        .catch(fail),
    [api, namespace, fail],
  );
  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    unwrap(api.connections.list({ namespace }))
      .then(setConnections)
      .catch(fail);
  }, [api, namespace, fail]);
  return { agents, connections, load };
}

function AgentList({ agents, onEdit }: { readonly agents: readonly AgentView[]; readonly onEdit: (agent: AgentView) => void }) {
  return (
    <ul className="plain-list">
      {agents.map((agent) => (
        <li key={agent.name}>
          <button type="button" className="link-button" onClick={() => onEdit(agent)}>
            {agent.name}
          </button>{' '}
          <span className="muted">
            v{agent.version} · {plural(agent.tools.length, 'tool')} · model profile {agent.modelProfile}
          </span>
        </li>
      ))}
      {agents.length === 0 && <li className="muted">No agents yet.</li>}
    </ul>
  );
}

export function AgentsPage({ api, namespace }: { api: WardApi; namespace: string }) {
  const [selected, setSelected] = useState<AgentView | null>(null);
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const [keep, setKeep] = useState<ReadonlySet<string>>(new Set());
  const [notice, say] = usePageNotice();
  const { agents, connections, load } = useAgentsAndConnections(api, namespace, say.fail);
  /** Checked connection tools, as `CONNECTION/TOOL` selectors. */
  const [add, setAdd] = useState<ReadonlySet<string>>(new Set());

  const edit = (agent: AgentView) => {
    setSelected(agent);
    setName(agent.name);
    setInstructions(agent.instructions);
    setKeep(new Set(agent.tools.map((tool) => tool.name)));
    setAdd(new Set());
    say.clear();
  };
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
  const offered = offeredTools(connections, new Set(tools.map((tool) => tool.name)));
  /** True when it went through; a refused grant keeps what was typed, to be corrected. */
  const changePermissions = async (action: () => Promise<AgentView>, done: string, onError?: (text: string) => void): Promise<boolean> => {
    try {
      setSelected(await action());
      say.info(done);
      await load();
      return true;
    } catch (failure) {
      if (onError === undefined) say.fail(failure);
      else onError(errorText(failure));
      return false;
    }
  };

  return (
    <section className="page" aria-label="Agents">
      <h1>Agents</h1>
      <AgentList agents={agents} onEdit={edit} />
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          void publish();
        }}
      >
        <h2>Edit and publish</h2>
        <label>
          Name
          <input value={name} onChange={(event) => setName(event.target.value)} placeholder="research-helper" required />
        </label>
        <label>
          Instructions
          <textarea value={instructions} onChange={(event) => setInstructions(event.target.value)} rows={6} />
        </label>
        <PinnedTools tools={tools} keep={keep} onKeep={setKeep} />
        <OfferedTools offered={offered} add={add} onAdd={setAdd} />
        <button type="submit" className="primary">
          Publish new version
        </button>
      </form>
      {selected !== null && <AgentPermissions api={api} namespace={namespace} agent={selected} change={changePermissions} />}
      <PageNotice notice={notice} />
    </section>
  );
}
