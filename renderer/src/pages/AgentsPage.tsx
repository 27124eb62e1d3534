/** The agent editor: instructions, tools, requested permissions; publishing makes a new immutable version. */
import { useEffect, useState } from 'react';
import type { AgentView, WardApi } from '../../../preload/contract.js';
import { errorText, unwrap } from '../api.js';

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

export function AgentsPage({ api, namespace }: { api: WardApi; namespace: string }) {
  const [agents, setAgents] = useState<AgentView[]>([]);
  const [name, setName] = useState('');
  const [instructions, setInstructions] = useState('');
  const [tools, setTools] = useState('');
  const [permissions, setPermissions] = useState('');
  const [message, setMessage] = useState<{ tone: 'info' | 'error'; text: string } | null>(null);

  const load = () =>
    unwrap(api.agents.list({ namespace }))
      .then(setAgents)
      .catch((failure: unknown) => setMessage({ tone: 'error', text: errorText(failure) }));
  useEffect(() => {
    void load();
  }, [api, namespace]);

  const edit = (agent: AgentView) => {
    setName(agent.name);
    setInstructions(agent.instructions);
    setTools(agent.tools.join('\n'));
    setPermissions(agent.permissions.join('\n'));
    setMessage(null);
  };
  const publish = async () => {
    try {
      const published = await unwrap(api.agents.publish({ namespace, name: name.trim(), spec: { instructions, tools: lines(tools), permissions: lines(permissions) } }));
      setMessage({ tone: 'info', text: `Published ${published.name} version ${published.version}` });
      await load();
    } catch (failure) {
      setMessage({ tone: 'error', text: errorText(failure) });
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
              v{agent.version} · {agent.tools.length} tools · {agent.permissions.length} permissions
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
        <label>
          Tools (one per line, server/tool)
          <textarea value={tools} onChange={(event) => setTools(event.target.value)} rows={3} />
        </label>
        <label>
          Requested permissions (one per line, e.g. read:/home/me/notes)
          <textarea value={permissions} onChange={(event) => setPermissions(event.target.value)} rows={3} />
        </label>
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
