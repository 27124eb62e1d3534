/**
 * The agent editor: instructions and which pinned tools stay; publishing makes a new immutable
 * version. Pinning new tools contacts upstream servers, which the `ward agents create` command does.
 */
import { useCallback, useEffect, useState } from 'react';
import type { AgentView, WardApi } from '../../../preload/contract.js';
import { errorText, unwrap } from '../api.js';

export function AgentsPage({ api, namespace }: { api: WardApi; namespace: string }) {
  const [agents, setAgents] = useState<AgentView[]>([]);
  const [selected, setSelected] = useState<AgentView | null>(null);
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const [keep, setKeep] = useState<ReadonlySet<string>>(new Set());
  const [message, setMessage] = useState<{ tone: 'info' | 'error'; text: string } | null>(null);

  const load = useCallback(
    () =>
      unwrap(api.agents.list({ namespace }))
        .then(setAgents)
        .catch((failure: unknown) => setMessage({ tone: 'error', text: errorText(failure) })),
    [api, namespace],
  );
  useEffect(() => {
    void load();
  }, [load]);

  const edit = (agent: AgentView) => {
    setSelected(agent);
    setName(agent.name);
    setInstructions(agent.instructions);
    setKeep(new Set(agent.tools.map((tool) => tool.name)));
    setMessage(null);
  };
  const toggle = (tool: string) => {
    const next = new Set(keep);
    if (next.has(tool)) next.delete(tool);
    else next.add(tool);
    setKeep(next);
  };
  const publish = async () => {
    try {
      const published = await unwrap(api.agents.publish({ namespace, name: name.trim(), instructions, keepTools: [...keep] }));
      setMessage({ tone: 'info', text: `Published ${published.name} version ${published.version}` });
      setSelected(published);
      await load();
    } catch (failure) {
      setMessage({ tone: 'error', text: errorText(failure) });
    }
  };
  const tools = selected !== null && selected.name === name.trim() ? selected.tools : [];

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
              v{agent.version} · {agent.tools.length} tools · model profile {agent.modelProfile}
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
          {tools.length === 0 && <p className="muted">No pinned tools. Pin tools from an MCP server with: ward agents create NAME --upstream … --tool …</p>}
          {tools.map((tool) => (
            <label key={tool.name} className="checkbox">
              <input type="checkbox" checked={keep.has(tool.name)} onChange={() => toggle(tool.name)} /> <code>{tool.name}</code>{' '}
              <span className="muted">
                from {tool.upstream}
                {tool.description ? ` — ${tool.description}` : ''}
              </span>
            </label>
          ))}
        </fieldset>
        <button type="submit" className="primary">
          Publish new version
        </button>
        {message !== null && (
          <div className={`banner banner-${message.tone}`} role={message.tone === 'error' ? 'alert' : 'status'}>
            {message.text}
          </div>
        )}
      </form>
    </section>
  );
}
