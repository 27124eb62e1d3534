/**
 * Adds a local (stdio) MCP server: the program, its arguments one per line (no shell: each line
 * is one argument as given), secret variables whose values go to the keychain and are never
 * shown again, and whether it runs in the OS sandbox (the hosts it may reach, its one folder).
 */
import { Plus, Trash2 } from 'lucide-react';
import { useState } from 'react';
import { useFormError } from '../components/FieldError.js';

/** A secret variable of the server: its name, and its value bound for the keychain. */
export interface SecretVariable {
  name: string;
  value: string;
}

export interface LocalServer {
  readonly name: string;
  readonly command: string;
  readonly args: string[];
  readonly secrets: SecretVariable[];
  readonly sandbox?: { net: string[]; folder?: string };
}

export function LocalServerForm({ busy, onAdd }: { busy: boolean; onAdd: (server: LocalServer, onError: (text: string) => void) => Promise<boolean> }) {
  const [name, setName] = useState('');
  const [command, setCommand] = useState('');
  const [args, setArgs] = useState('');
  const [secrets, setSecrets] = useState<SecretVariable[]>([]);
  const [sandboxed, setSandboxed] = useState(false);
  const [hosts, setHosts] = useState('');
  const [folder, setFolder] = useState('');
  // Main's refusal names the connection when the name is the problem; otherwise it is the program.
  const error = useFormError((text) => (/\bnamed?\b/.test(text) && !/\bprogram\b/.test(text) ? 'name' : 'command'));
  return (
    <form
      className="form"
      aria-label="Add a local MCP server"
      onSubmit={(event) => {
        event.preventDefault();
        const lines = args.split('\n').filter((line) => line !== '');
        const net = hosts.split('\n').map((line) => line.trim()).filter((line) => line !== '');
        const sandbox = sandboxed ? { net, ...(folder.trim() === '' ? {} : { folder: folder.trim() }) } : undefined;
        const server: LocalServer = { name: name.trim(), command: command.trim(), args: lines, secrets: secrets.filter((secret) => secret.name.trim() !== '').map((secret) => ({ name: secret.name.trim(), value: secret.value })), ...(sandbox === undefined ? {} : { sandbox }) };
        error.clear();
        void onAdd(server, error.set).then((added) => {
          if (!added) return;
          setName('');
          setCommand('');
          setArgs('');
          setSecrets([]);
          setSandboxed(false);
          setHosts('');
          setFolder('');
        });
      }}
    >
      <h2>Add a local (stdio) MCP server</h2>
      <label>
        Name
        <input value={name} onChange={(event) => setName(event.target.value)} placeholder="files" required {...error.props('name')} />
        {error.message('name')}
      </label>
      <label>
        Program
        <input value={command} onChange={(event) => setCommand(event.target.value)} placeholder="/usr/local/bin/mcp-server-files or npx" required {...error.props('command')} />
        {error.message('command')}
      </label>
      <label>
        Arguments, one per line
        <textarea value={args} onChange={(event) => setArgs(event.target.value)} rows={3} placeholder={'--root\n~/projects'} />
      </label>
      <SecretVariables secrets={secrets} onChange={setSecrets} />
      <fieldset>
        <legend>OS sandbox</legend>
        <label className="checkbox">
          <input type="checkbox" checked={sandboxed} onChange={(event) => setSandboxed(event.target.checked)} />
          Run it in the OS sandbox
        </label>
        {sandboxed && (
          <>
            <p className="muted">It sees the system read-only and writes only its folder; it reaches only the hosts listed here.</p>
            <label>
              Hosts it may reach, one per line
              <textarea value={hosts} onChange={(event) => setHosts(event.target.value)} rows={2} placeholder={'api.example.com\n*.example.org:443'} />
            </label>
            <label>
              Its folder (read-write; empty: a private folder)
              <input value={folder} onChange={(event) => setFolder(event.target.value)} placeholder="~/mcp-files" />
            </label>
          </>
        )}
      </fieldset>
      <button type="submit" className="primary" disabled={busy}>
        Add local server
      </button>
    </form>
  );
}

/** The secret variables being added: names shown, values masked and kept only until the server is added. */
function SecretVariables({ secrets, onChange }: { secrets: SecretVariable[]; onChange: (secrets: SecretVariable[]) => void }) {
  const setSecret = (index: number, change: Partial<SecretVariable>) => onChange(secrets.map((secret, at) => (at === index ? { ...secret, ...change } : secret)));
  return (
    <fieldset>
      <legend>Secret variables</legend>
      <p className="muted">Their values are stored in the keychain and passed to the server alone; Ward never shows them again.</p>
      {secrets.map((secret, index) => (
        <div key={index} className="row">
          <input aria-label={`Variable ${index + 1} name`} value={secret.name} onChange={(event) => setSecret(index, { name: event.target.value })} placeholder="API_TOKEN" />
          <input aria-label={`Variable ${index + 1} value`} type="password" autoComplete="off" value={secret.value} onChange={(event) => setSecret(index, { value: event.target.value })} />
          <button type="button" className="icon-button" aria-label={`Remove variable ${index + 1}`} onClick={() => onChange(secrets.filter((_, at) => at !== index))}>
            <Trash2 size={14} aria-hidden />
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...secrets, { name: '', value: '' }])}>
        <Plus size={14} aria-hidden /> Add a secret variable
      </button>
    </fieldset>
  );
}
