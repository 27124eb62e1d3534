/** Upstream MCP servers: health, sign-in state and the tools each offers. */
import { useEffect, useState } from 'react';
import type { ConnectionView, WardApi } from '../../../preload/contract.js';
import { errorText, unwrap } from '../api.js';

const STATUS_TEXT: Record<ConnectionView['status'], string> = {
  signed_in: 'Signed in',
  signed_out: 'Signed out',
  error: 'Error',
  unknown: 'Unknown',
};

export function ConnectionsPage({ api, namespace }: { api: WardApi; namespace: string }) {
  const [connections, setConnections] = useState<ConnectionView[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    unwrap(api.connections.list({ namespace }))
      .then(setConnections)
      .catch((failure: unknown) => setError(errorText(failure)));
  }, [api, namespace]);

  return (
    <section className="page" aria-label="Connections">
      <h2>Connections</h2>
      {error !== null && (
        <div className="banner banner-error" role="alert">
          {error}
        </div>
      )}
      {connections?.length === 0 && <p className="muted">No connections in this namespace. Add one with the ward command: ward connections add.</p>}
      <ul className="cards">
        {connections?.map((connection) => (
          <li key={connection.id} className="card">
            <div className="card-title">
              {connection.name} <span className={`pill pill-${connection.status}`}>{STATUS_TEXT[connection.status]}</span>
            </div>
            <div className="muted">{connection.url}</div>
            {connection.detail !== null && <div className="muted">{connection.detail}</div>}
            <div>{connection.tools.length === 0 ? 'No tools' : connection.tools.join(', ')}</div>
          </li>
        ))}
      </ul>
    </section>
  );
}
