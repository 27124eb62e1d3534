/** One connection on the Connections page: its state, address and tools (each with its switch, Re-pin when it changed), and Check, Sign in/out, Remove. */
import { useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { ConnectionToolView, ConnectionView } from '../../../common/views.js';
import { unwrap } from '../api.js';
import { LockIcon } from '../components/ManagedLock.js';

const STATUS_TEXT: Record<ConnectionView['status'], string> = {
  signed_in: 'Connected',
  signed_out: 'Signed out',
  error: 'Error',
  unknown: 'Not checked yet',
};

/** Runs an action of the page (one at a time, the list reloaded after); true when it went through. */
/** Runs an action; a failure goes to `onError` (a form's own field) when given, else to the page's notice. True when it went through. */
export type PageAction = (label: string, action: () => Promise<unknown>, done: string, onError?: (text: string) => void) => Promise<boolean>;

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
      <ToolList api={api} namespace={namespace} connection={connection} busy={busy} act={act} />
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

const STATUS_WORDS: Record<Exclude<ConnectionToolView['status'], 'pinned'>, string> = {
  schema_changed: 'Changed upstream: its input schema is not the one pinned, so it stays off until you re-pin it.',
  missing: 'No longer offered by the server.',
};

/**
 * The connection's pinned tools behind a disclosure (open by itself when one changed upstream):
 * a switch per tool, and Re-pin for one whose schema changed, which stays refused until then.
 */
function ToolList({ api, namespace, connection, busy, act }: Omit<ConnectionCardProps, 'onRemove'>) {
  const { name, pins } = connection;
  const changed = pins.filter((pin) => pin.status !== 'pinned').length;
  // Opens by itself when a tool changes upstream, and stays as the person left it otherwise.
  const [open, setOpen] = useState(changed > 0);
  useEffect(() => {
    if (changed > 0) setOpen(true);
  }, [changed]);
  const change = (pin: ConnectionToolView, action: 'enable' | 'disable' | 'repin', done: string) =>
    void act(`tool:${pin.exposedName}`, () => unwrap(api.connections.changeTool({ namespace, name, action, tool: pin.name })), done);
  return (
    <details className="connection-tool-list" open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary className="connection-tools">
        {connection.tools.length === 0 ? 'No tools on' : `Tools: ${connection.tools.join(', ')}`}
        {pins.length > 0 && <span className="muted"> · {connection.tools.length} of {pins.length} on</span>}
        {changed > 0 && <span className="tool-drift"> · {changed === 1 ? '1 tool changed upstream' : `${changed} tools changed upstream`}</span>}
      </summary>
      {pins.length === 0 ? (
        <p className="muted">No tools pinned yet: Check lists what the server offers.</p>
      ) : (
        <ul className="tool-switches" aria-label={`Tools of ${name}`}>
          {pins.map((pin) => (
            <li key={pin.name} className="tool-switch-row" data-testid="connection-tool">
              <label className="tool-switch">
                <input
                  type="checkbox"
                  role="switch"
                  checked={pin.enabled && pin.status === 'pinned'}
                  disabled={busy || pin.status !== 'pinned'}
                  onChange={(event) => change(pin, event.target.checked ? 'enable' : 'disable', `${event.target.checked ? 'Turned on' : 'Turned off'} ${pin.exposedName}`)}
                />
                <span className="tool-switch-name">{pin.exposedName}</span>
              </label>
              {pin.description !== '' && <span className="muted tool-switch-description">{pin.description}</span>}
              {pin.status !== 'pinned' && (
                <span className="tool-drift" role="note">
                  {STATUS_WORDS[pin.status]}{' '}
                  {pin.status === 'schema_changed' && (
                    <button type="button" disabled={busy} onClick={() => change(pin, 'repin', `Re-pinned ${pin.exposedName}`)}>
                      Re-pin
                    </button>
                  )}
                </span>
              )}
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}
