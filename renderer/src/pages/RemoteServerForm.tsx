/** "Add a remote MCP server": a name, its URL, and a client registered with the server beforehand (its secret goes to the keychain and never comes back). */
import { useState } from 'react';
import type { PolicySettingView } from '../../../common/views.js';
import { useFormError } from '../components/FieldError.js';
import { ManagedLock } from '../components/ManagedLock.js';

export interface RemoteServer {
  readonly name: string;
  readonly url: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
}

export interface RemoteServerFormProps {
  readonly busy: boolean;
  /** Set when the admin policy allows only the connections it defines. */
  readonly managedOnly: PolicySettingView | undefined;
  /** True when the server was added. */
  readonly onAdd: (server: RemoteServer, onError: (text: string) => void) => Promise<boolean>;
}

export function RemoteServerForm({ busy, managedOnly, onAdd }: RemoteServerFormProps) {
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [clientId, setClientId] = useState('');
  const [clientSecret, setClientSecret] = useState('');
  const locked = managedOnly?.value === 'true';
  // Main's refusal names the connection when the name is the problem; otherwise it is the address.
  const error = useFormError((text) => (/\bnamed?\b/.test(text) ? 'name' : 'url'));
  return (
    <form
      className="form"
      aria-label="Add a remote MCP server"
      onSubmit={(event) => {
        event.preventDefault();
        // A refused address keeps what was typed, to be corrected.
        const client = clientId.trim() === '' ? {} : { clientId: clientId.trim(), ...(clientSecret === '' ? {} : { clientSecret }) };
        error.clear();
        void onAdd({ name: name.trim(), url: url.trim(), ...client }, error.set).then((added) => {
          if (!added) return;
          setName('');
          setUrl('');
          setClientId('');
          setClientSecret('');
        });
      }}
    >
      <h2>Add a remote MCP server</h2>
      <ManagedLock setting={locked ? managedOnly : undefined} what="only the connections your organization defines may be used" />
      <label>
        Name
        <input value={name} onChange={(event) => setName(event.target.value)} placeholder="tracker" required {...error.props('name')} />
        {error.message('name')}
      </label>
      <label>
        Server URL
        <input value={url} onChange={(event) => setUrl(event.target.value)} placeholder="https://mcp.example.com/mcp" required {...error.props('url')} />
        {error.message('url')}
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
      <button type="submit" className="primary" disabled={busy || locked}>
        Add connection
      </button>
    </form>
  );
}
