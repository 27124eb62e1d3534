/** Upstream MCP servers: add a remote one, check its health and tools, sign in, remove. */
import { useCallback, useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { AgentView, ConnectionView, PolicyView } from '../../../common/views.js';
import { unwrap } from '../api.js';
import { ConfirmDialog } from '../components/Dialog.js';
import { LockIcon, ManagedLock, policySetting } from '../components/ManagedLock.js';
import { PageNotice, usePageNotice } from '../components/PageNotice.js';
import { LocalServerForm } from './LocalServerForm.js';

const STATUS_TEXT: Record<ConnectionView['status'], string> = {
  signed_in: 'Connected',
  signed_out: 'Signed out',
  error: 'Error',
  unknown: 'Not checked yet',
};

export function ConnectionsPage({ api, namespace, policy }: { api: WardApi; namespace: string; policy: PolicyView | null }) {
  const managedOnly = policySetting(policy, 'managedConnectionsOnly');
  const [connections, setConnections] = useState<ConnectionView[] | null>(null);
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  /** The connection whose removal waits for the person's confirmation. */
  const [removing, setRemoving] = useState<ConnectionView | null>(null);
  const [agents, setAgents] = useState<AgentView[]>([]);
  useEffect(() => {
    unwrap(api.agents.list({ namespace }))
      .then(setAgents)
      .catch(() => setAgents([]));
  }, [api, namespace, removing]);
  /** Agents whose latest version pins a tool of the connection. */
  const pinnedBy = (name: string) => agents.filter((agent) => agent.tools.some((tool) => tool.upstream === name)).map((agent) => agent.name);
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

  /** True when the action went through. */
  const act = async (label: string, action: () => Promise<unknown>, done: string): Promise<boolean> => {
    setBusy(label);
    say.clear();
    try {
      await action();
      // The list shows the outcome by the time it is announced.
      await load();
      say.info(done);
      return true;
    } catch (failure) {
      say.fail(failure);
      await load();
      return false;
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
              {connection.name}{' '}
              <span className={`pill pill-${connection.status}`}>
                <span className={`dot dot-${connection.status}`} aria-hidden />
                {STATUS_TEXT[connection.status]}
              </span>
            </div>
            <div className="muted">{connection.url}</div>
            {connection.managedBy !== null && (
              <p className="managed-lock" role="note" data-testid="managed-connection">
                <LockIcon /> Managed by your organization · {connection.managedBy}
              </p>
            )}
            {connection.detail !== null && <div className="muted">{connection.detail}</div>}
            <div className="connection-tools">{connection.tools.length === 0 ? 'No tools pinned' : `Tools: ${connection.tools.join(', ')}`}</div>
            <div className="row">
              <button type="button" disabled={busy !== null} onClick={() => void act('check', () => unwrap(api.connections.check({ namespace, name: connection.name })), `Checked ${connection.name}`)}>
                Check
              </button>
              {/^https?:/.test(connection.url) &&
                (connection.status === 'signed_in' ? (
                  <button type="button" disabled={busy !== null} onClick={() => void act('signout', () => unwrap(api.connections.signOut({ namespace, name: connection.name })), `Signed out of ${connection.name}`)}>
                    Sign out
                  </button>
                ) : (
                  <button type="button" disabled={busy !== null} onClick={() => void act('signin', () => unwrap(api.connections.signIn({ namespace, name: connection.name })), `Signed in to ${connection.name}`)}>
                    Sign in
                  </button>
                ))}
              <button type="button" className="danger" disabled={busy !== null || connection.managedBy !== null} onClick={() => setRemoving(connection)}>
                Remove
              </button>
            </div>
          </li>
        ))}
      </ul>
      <form
        className="form"
        aria-label="Add a remote MCP server"
        onSubmit={(event) => {
          event.preventDefault();
          // A refused address keeps what was typed, to be corrected.
          // A client registered with the server beforehand; its secret goes to the keychain and never comes back.
          const client = clientId.trim() === '' ? {} : { clientId: clientId.trim(), ...(clientSecret === '' ? {} : { clientSecret }) };
          void act('add', () => unwrap(api.connections.add({ namespace, name: name.trim(), url: url.trim(), ...client })), `Added ${name.trim()}`).then((added) => {
            if (!added) return;
            setName('');
            setUrl('');
            setClientId('');
            setClientSecret('');
          });
        }}
      >
        <h3>Add a remote MCP server</h3>
        <ManagedLock setting={managedOnly?.value === 'true' ? managedOnly : undefined} what="only the connections your organization defines may be used" />
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
        <button type="submit" className="primary" disabled={busy !== null || managedOnly?.value === 'true'}>
          Add connection
        </button>
      </form>
      <LocalServerForm busy={busy !== null} onAdd={(server) => act('add', () => unwrap(api.connections.addLocal({ namespace, ...server })), `Added ${server.name}`)} />
      <PageNotice notice={notice} />
      <ConfirmDialog
        open={removing !== null}
        title={`Remove ${removing?.name ?? ''}?`}
        description={
          removing === null
            ? ''
            : pinnedBy(removing.name).length > 0
              ? `Agents ${pinnedBy(removing.name).join(', ')} pin its tools: they can no longer call them. Its stored sign-in is deleted too.`
              : 'No agent pins its tools. Its stored sign-in is deleted too.'
        }
        confirmLabel="Remove"
        onCancel={() => setRemoving(null)}
        onConfirm={() => {
          const name = removing!.name;
          setRemoving(null);
          void act('remove', () => unwrap(api.connections.remove({ namespace, name })), `Removed ${name}`);
        }}
      />
    </section>
  );
}
