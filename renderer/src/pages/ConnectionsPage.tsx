/** Upstream MCP servers: add a remote one, check its health and tools, sign in, remove. */
import { useCallback, useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { AgentView, ConnectionView, PolicySettingView, PolicyView } from '../../../common/views.js';
import { errorText, unwrap } from '../api.js';
import { ConfirmDialog } from '../components/Dialog.js';
import { policySetting } from '../components/ManagedLock.js';
import { PageNotice, usePageNotice } from '../components/PageNotice.js';
import { ConnectionCard, type PageAction } from './ConnectionCard.js';
import { LocalServerForm } from './LocalServerForm.js';
import { RemoteServerForm } from './RemoteServerForm.js';

export function ConnectionsPage({ api, namespace, policy }: { api: WardApi; namespace: string; policy: PolicyView | null }) {
  const managedOnly = policySetting(policy, 'managedConnectionsOnly');
  const [connections, setConnections] = useState<ConnectionView[] | null>(null);
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
  const act: PageAction = async (label, action, done, onError) => {
    setBusy(label);
    say.clear();
    try {
      await action();
      // The list shows the outcome by the time it is announced.
      await load();
      say.info(done);
      return true;
    } catch (failure) {
      if (onError === undefined) say.fail(failure);
      else onError(errorText(failure));
      await load();
      return false;
    } finally {
      setBusy(null);
    }
  };

  return (
    <section className="page" aria-label="Connections">
      <h1>Connections</h1>
      {connections?.length === 0 && <p className="muted">No connections in this namespace yet.</p>}
      <ul className="cards">
        {connections?.map((connection) => (
          <ConnectionCard key={connection.id} connection={connection} busy={busy !== null} act={act} api={api} namespace={namespace} onRemove={setRemoving} />
        ))}
      </ul>
      {connections !== null && <AddConnection api={api} namespace={namespace} first={connections.length === 0} busy={busy !== null} managedOnly={managedOnly} act={act} />}
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

interface AddConnectionProps {
  readonly api: WardApi;
  readonly namespace: string;
  /** The namespace has no connection yet. */
  readonly first: boolean;
  readonly busy: boolean;
  readonly managedOnly: PolicySettingView | undefined;
  readonly act: PageAction;
}

/** The add forms: the page itself while it has no connection; after that they wait behind "Add a connection". */
function AddConnection({ api, namespace, first, busy, managedOnly, act }: AddConnectionProps) {
  const [adding, setAdding] = useState(false);
  return (
    // While the page has no connection the forms are open by themselves: that opening is not the person's.
    <details className="add-connection" open={first || adding} onToggle={(event) => !first && setAdding(event.currentTarget.open)}>
      <summary>Add a connection</summary>
      <RemoteServerForm busy={busy} managedOnly={managedOnly} onAdd={(server, onError) => act('add', () => unwrap(api.connections.add({ namespace, ...server })), `Added ${server.name}`, onError)} />
      <LocalServerForm busy={busy} onAdd={(server, onError) => act('add', () => unwrap(api.connections.addLocal({ namespace, ...server })), `Added ${server.name}`, onError)} />
    </details>
  );
}
