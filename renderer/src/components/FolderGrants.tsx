/**
 * What a chat may do before its first turn: the folder it works in, the grants of the chat itself
 * (its project folder's) and of its agent (every chat with it). Anything else it tries is asked.
 */
import { FolderOpen, ShieldCheck } from 'lucide-react';
import type { AgentPermissionView, AgentView } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';

const VERB: Readonly<Record<AgentPermissionView['kind'], string>> = {
  read: 'read',
  write: 'write',
  net: 'connect to',
  run: 'run',
  env: 'read the variable',
  mcp: 'call',
};

function GrantLine({ grant, scope }: { grant: Pick<AgentPermissionView, 'effect' | 'kind' | 'value'>; scope: string }) {
  return (
    <li className={`grant grant-${grant.effect}`}>
      {grant.effect === 'allow' ? 'May' : 'May never'} {VERB[grant.kind]} <code>{escapeLineForWindow(grant.value, 300)}</code> <span className="muted">({scope})</span>
    </li>
  );
}

export function FolderGrants({ workspace, chatGrants, agent }: { workspace: string | null; chatGrants: readonly Pick<AgentPermissionView, 'effect' | 'kind' | 'value'>[]; agent: AgentView | undefined }) {
  const agentGrants = agent?.permissions ?? [];
  return (
    <section className="folder-grants" aria-label="What this chat may do" data-testid="folder-grants">
      <p className="folder-line">
        <FolderOpen size={16} aria-hidden /> Works in {workspace === null ? "a folder of its own inside Ward's data" : <code>{escapeLineForWindow(workspace, 300)}</code>}
      </p>
      <ul className="grant-list">
        {chatGrants.map((grant, index) => (
          <GrantLine key={`c${index}`} grant={grant} scope="this chat" />
        ))}
        {agentGrants.map((grant) => (
          <GrantLine key={grant.id} grant={grant} scope={`every chat with ${agent!.name}`} />
        ))}
        {chatGrants.length === 0 && agentGrants.length === 0 && <li className="muted">No grants yet.</li>}
      </ul>
      <p className="muted">
        <ShieldCheck size={14} aria-hidden /> Anything else the agent tries, in this folder or outside it, is asked of you first.
      </p>
    </section>
  );
}
