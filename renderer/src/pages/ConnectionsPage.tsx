/** Upstream MCP servers: add a remote one, check its health and tools, sign in, remove. */
import { useCallback, useEffect, useState } from 'react';
import type { ConnectionView, WardApi } from '../../../preload/contract.js';
import { unwrap } from '../api.js';
import { PageNotice, usePageNotice } from '../components/PageNotice.js';

const STATUS_TEXT: Record<ConnectionView['status'], string> = {
  signed_in: 'Connected',
  signed_out: 'Signed out',
  error: 'Error',
  unknown: 'Not checked yet',
};

export function ConnectionsPage({ api, namespace }: { api: WardApi; namespace: string }) {
  const [connections, setConnections] = useState<ConnectionView[] | null>(null);
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const [notice, say] = usePageNotice();

  const load = useCallback(
    () =>
      unwrap(api.connections.list({ namespace }))
        .then(setConnections)
        .catch(say.fail),
    [api, namespace],
  );
  useEffect(() => {
    void load();
  }, [load]);

  const act = async (label: string, action: () => Promise<unknown>, done: string) => {
    setBusy(label);
    say.clear();
    try {
      await action();
      // The list shows the outcome by the time it is announced.
      await load();
      say.info(done);
    } catch (failure) {
      say.fail(failure);
      await load();
    } finally {
      setBusy(null);
    }
  };

  return (
    <section className="page" aria-label="Connections">
      <h2>Connections</h2>
      {connections?.length === 0 && <p className="muted">No connections in this namespace yet.</p>}
      <ul className="cards">
        {connections?.map((connection) => (
          <li key={connection.id} className="card" data-testid="connection">
            <div className="card-title">
              {connection.name} <span className={`pill pill-${connection.status}`}>{STATUS_TEXT[connection.status]}</span>
            </div>
            <div className="muted">{connection.url}</div>
            {connection.detail !== null && <div className="muted">{connection.detail}</div>}
            <div className="connection-tools">{connection.tools.length === 0 ? 'No tools pinned' : `Tools: ${connection.tools.join(', ')}`}</div>
            <div className="row">
              <button type="button" disabled={busy !== null} onClick={() => void act('check', () => unwrap(api.connections.check({ namespace, name: connection.name })), `Checked ${connection.name}`)}>
                Check
              </button>
              {/^https?:/.test(connection.url) && (
                <button type="button" disabled={busy !== null} onClick={() => void act('signin', () => unwrap(api.connections.signIn({ namespace, name: connection.name })), `Signed in to ${connection.name}`)}>
                  Sign in
                </button>
              )}
              <button type="button" className="danger" disabled={busy !== null} onClick={() => void act('remove', () => unwrap(api.connections.remove({ namespace, name: connection.name })), `Removed ${connection.name}`)}>
                Remove
              </button>
            </div>
          </li>
        ))}
      </ul>
      <form
        className="form"
        onSubmit={(event) => {
          event.preventDefault();
          // A client registered with the server beforehand; its secret goes to the keychain and never comes back.
          const client = clientId.trim() === '' ? {} : { clientId: clientId.trim(), ...(clientSecret === '' ? {} : { clientSecret }) };
          void act('add', () => unwrap(api.connections.add({ namespace, name: name.trim(), url: url.trim(), ...client })), `Added ${name.trim()}`).then(() => {
            setName('');
            setUrl('');
            setClientId('');
            setClientSecret('');
          });
        }}
      >
        <h3>Add a remote MCP server</h3>
        <label>
          Name
          <input value={name} onChange={(event) => setName(event.target.value)} placeholder="tracker" required />
        </label>
        <label>
          Server URL
          <input value={url} onChange={(event) => setUrl(event.target.value)} placeholder="https://mcp.example.com/mcp" required />
        </label>
        <label>
          Client ID (only for a client registered with the server beforehand)
          <input value={clientId} onChange={(event) => setClientId(event.target.value)} autoComplete="off" />
        </label>
        {clientId.trim() !== '' && (
          <label>
            Client secret (kept in the system keychain)
            <input type="password" value={clientSecret} onChange={(event) => setClientSecret(event.target.value)} autoComplete="off" />
          </label>
        )}
        <button type="submit" className="primary" disabled={busy !== null}>
          Add connection
        </button>
        <p className="muted">Local (stdio) servers are added with the ward command: ward connections add.</p>
      </form>
      <PageNotice notice={notice} />
    </section>
  );
}
