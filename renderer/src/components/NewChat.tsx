/**
 * A chat not started yet: the agent, the project folder (the system's folder dialog) and what the
 * agent may do there unasked, with the grants shown before the first turn. The first prompt
 * starts the chat (main makes it, titled from that prompt, and runs its first turn); sending the
 * same prompt again after a failure reuses its request id, so a retry never makes a second chat.
 */
import { FolderOpen } from 'lucide-react';
import { useRef, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { AgentView, FolderAccess } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { errorText, unwrap } from '../api.js';
import { Composer } from './Composer.js';
import { ErrorBanner } from './PageNotice.js';
import { FolderGrants } from './FolderGrants.js';

/** Published by main on first use (a fresh install has no agent of its own yet). */
export const BUILT_IN_AGENT = 'default';

const ACCESS: readonly { value: FolderAccess; label: string }[] = [
  { value: 'ask', label: 'Ask me each time' },
  { value: 'read', label: 'Read without asking' },
  { value: 'write', label: 'Read and write without asking' },
];

export interface NewChatProps {
  readonly api: WardApi;
  readonly namespace: string;
  readonly agents: readonly AgentView[];
  readonly focusKey: string;
  readonly onCreated: (conversationId: string) => void;
  /** The folder chosen before (the setup card's first folder), or null for Ward's own. */
  readonly initialWorkspace?: string | null;
}

export function NewChat({ api, namespace, agents, focusKey, onCreated, initialWorkspace = null }: NewChatProps) {
  const names = agents.some((agent) => agent.name === BUILT_IN_AGENT) ? agents.map((agent) => agent.name) : [BUILT_IN_AGENT, ...agents.map((agent) => agent.name)];
  const [agentName, setAgentName] = useState(names[0] ?? BUILT_IN_AGENT);
  const [workspace, setWorkspace] = useState<string | null>(initialWorkspace);
  const [access, setAccess] = useState<FolderAccess>('ask');
  const [error, setError] = useState<string | null>(null);
  /** The request of the last prompt sent: the same prompt sent again is the same request. */
  const request = useRef<{ prompt: string; id: string } | null>(null);

  const pick = async () => {
    setError(null);
    try {
      const { path } = await unwrap(api.folders.pick({}));
      if (path !== null) setWorkspace(path);
    } catch (failure) {
      setError(errorText(failure));
    }
  };
  const start = async (prompt: string): Promise<boolean> => {
    setError(null);
    try {
      if (request.current?.prompt !== prompt) request.current = { prompt, id: crypto.randomUUID() };
      const started = await unwrap(
        api.conversations.start({ namespace, agentName, prompt, requestId: request.current.id, ...(workspace === null ? {} : { workspace, access }) }),
      );
      request.current = null;
      onCreated(started.conversationId);
      return true;
    } catch (failure) {
      setError(errorText(failure));
      return false;
    }
  };
  const chatGrants =
    workspace === null || access === 'ask' ? [] : (access === 'write' ? (['read', 'write'] as const) : (['read'] as const)).map((kind) => ({ effect: 'allow' as const, kind, value: workspace }));

  return (
    <section className="chat" aria-label="New chat">
      <header className="chat-header">
        <div className="chat-heading">
          <h1>New chat</h1>
        </div>
      </header>
      <div className="chat-empty">
        <form className="new-chat-form" onSubmit={(event) => event.preventDefault()}>
          <label className="field">
            Agent
            <select value={agentName} onChange={(event) => setAgentName(event.target.value)}>
              {names.map((name) => (
                <option key={name} value={name}>
                  {name}
                  {name === BUILT_IN_AGENT && !agents.some((agent) => agent.name === BUILT_IN_AGENT) ? ' (built in)' : ''}
                </option>
              ))}
            </select>
          </label>
          <ProjectFolderField workspace={workspace} access={access} onPick={() => void pick()} onClear={() => setWorkspace(null)} onAccess={setAccess} />
          <FolderGrants workspace={workspace} chatGrants={chatGrants} agent={agents.find((agent) => agent.name === agentName)} />
        </form>
      </div>
      <ErrorBanner text={error} />
      <Composer run={null} onSend={start} onStop={() => undefined} focusKey={focusKey} hint="Your first message starts the chat and names it — Enter sends" />
    </section>
  );
}

/** Where the chat works: Ward's own folder or a project folder, and what the agent may do there without asking. */
function ProjectFolderField({ workspace, access, onPick, onClear, onAccess }: { workspace: string | null; access: FolderAccess; onPick: () => void; onClear: () => void; onAccess: (access: FolderAccess) => void }) {
  return (
    <>
      <div className="field">
        <span id="project-folder-label">Project folder</span>
        <div className="row">
          <button type="button" onClick={onPick} aria-describedby="project-folder-label">
            <FolderOpen size={14} aria-hidden /> {workspace === null ? 'Choose a folder…' : 'Choose another folder…'}
          </button>
          {workspace !== null && (
            <button type="button" className="link-button" onClick={onClear}>
              Use Ward's own folder
            </button>
          )}
        </div>
        {workspace !== null && <code className="chosen-folder">{escapeLineForWindow(workspace, 300)}</code>}
      </div>
      {workspace !== null && (
        <fieldset className="choice-group">
          <legend>In this folder, the agent may</legend>
          {ACCESS.map((choice) => (
            <label key={choice.value} className="choice">
              <input type="radio" name="folder-access" value={choice.value} checked={access === choice.value} onChange={() => onAccess(choice.value)} /> {choice.label}
            </label>
          ))}
        </fieldset>
      )}
    </>
  );
}
