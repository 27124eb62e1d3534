/** The permissions an agent holds in every conversation: each with Revoke, and a form to grant more. */
import { useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { PermissionKind } from '../../../common/events.js';
import type { AgentView } from '../../../common/views.js';
import { unwrap } from '../api.js';
import { useFormError } from '../components/FieldError.js';

const KINDS: readonly { kind: PermissionKind; hint: string }[] = [
  { kind: 'read', hint: 'folders or files, e.g. ~/notes or /srv/data' },
  { kind: 'write', hint: 'folders or files' },
  { kind: 'net', hint: 'hosts, e.g. api.github.com or example.com:8443' },
  { kind: 'run', hint: 'commands, e.g. git,npm' },
  { kind: 'env', hint: 'variable names, e.g. HOME' },
  { kind: 'mcp', hint: 'server/tool, e.g. github/list_issues' },
];

export interface AgentPermissionsProps {
  readonly api: WardApi;
  readonly namespace: string;
  readonly agent: AgentView;
  /** Runs a change and shows the agent it returns; true when it went through. */
  readonly change: (action: () => Promise<AgentView>, done: string, onError?: (text: string) => void) => Promise<boolean>;
}

export function AgentPermissions({ api, namespace, agent, change }: AgentPermissionsProps) {
  const [effect, setEffect] = useState<'allow' | 'deny'>('allow');
  const [kind, setKind] = useState<PermissionKind>('read');
  const [entries, setEntries] = useState('');
  const error = useFormError(() => 'entries');
  return (
    <section className="form" aria-label="Permissions">
      <h2>Permissions of {agent.name} (every conversation)</h2>
      <ul className="plain-list">
        {agent.permissions.map((grant) => (
          <li key={grant.id} data-testid="agent-permission">
            <code>
              {grant.effect} {grant.kind} {grant.value}
            </code>{' '}
            <button type="button" className="link-button" onClick={() => void change(() => unwrap(api.agents.revokeGrant({ namespace, name: agent.name, grantId: grant.id })), `Revoked ${grant.kind} ${grant.value}`)}>
              Revoke
            </button>
          </li>
        ))}
        {agent.permissions.length === 0 && <li className="muted">None: the agent is asked about anything beyond its pinned tools.</li>}
      </ul>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          // A refused grant keeps what was typed, to be corrected.
          error.clear();
          void change(() => unwrap(api.agents.grant({ namespace, name: agent.name, effect, kind, entries })), `Granted ${effect} ${kind}`, error.set).then((granted) => {
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
        <input aria-label="Entries" value={entries} onChange={(event) => setEntries(event.target.value)} placeholder={KINDS.find((entry) => entry.kind === kind)!.hint} required {...error.props('entries')} />
        <button type="submit">Grant</button>
        {error.message('entries')}
      </form>
    </section>
  );
}
