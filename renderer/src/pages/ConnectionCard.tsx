/** One connection on the Connections page: its state, address and tools, and Check, Sign in/out, Remove. */
import type { WardApi } from '../../../preload/contract.js';
import type { ConnectionView } from '../../../common/views.js';
import { unwrap } from '../api.js';
import { LockIcon } from '../components/ManagedLock.js';

const STATUS_TEXT: Record<ConnectionView['status'], string> = {
  signed_in: 'Connected',
  signed_out: 'Signed out',
  error: 'Error',
  unknown: 'Not checked yet',
};

/** Runs an action of the page (one at a time, the list reloaded after); true when it went through. */
export type PageAction = (label: string, action: () => Promise<unknown>, done: string) => Promise<boolean>;

export interface ConnectionCardProps {
  readonly api: WardApi;
  readonly namespace: string;
  readonly connection: ConnectionView;
  /** Another action is under way. */
  readonly busy: boolean;
  readonly act: PageAction;
  readonly onRemove: (connection: ConnectionView) => void;
}

export function ConnectionCard({ api, namespace, connection, busy, act, onRemove }: ConnectionCardProps) {
  const { name } = connection;
  return (
    <li className="card" data-testid="connection">
      <div className="card-title">
        {name}{' '}
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
        <button type="button" disabled={busy} onClick={() => void act('check', () => unwrap(api.connections.check({ namespace, name })), `Checked ${name}`)}>
          Check
        </button>
        {/^https?:/.test(connection.url) &&
          (connection.status === 'signed_in' ? (
            <button type="button" disabled={busy} onClick={() => void act('signout', () => unwrap(api.connections.signOut({ namespace, name })), `Signed out of ${name}`)}>
              Sign out
            </button>
          ) : (
            <button type="button" disabled={busy} onClick={() => void act('signin', () => unwrap(api.connections.signIn({ namespace, name })), `Signed in to ${name}`)}>
              Sign in
            </button>
          ))}
        <button type="button" className="danger" disabled={busy || connection.managedBy !== null} onClick={() => onRemove(connection)}>
          Remove
        </button>
      </div>
    </li>
  );
}
