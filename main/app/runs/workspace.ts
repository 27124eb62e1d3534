import fs from 'node:fs';
import path from 'node:path';
import { WardError } from '../../base/errors.js';
import { namespaceDir, type Namespace } from '../../namespaces/namespace.js';
import type { Conversation } from '../../store/conversations.js';

/** The folder a conversation's agent works in: the one the person named, or one inside the namespace's data. */
export function conversationWorkspace(home: string, ns: Namespace, conversation: Conversation): string {
  return conversation.workspace ?? path.join(namespaceDir(home, ns), 'workspaces', conversation.id);
}

/**
 * The CLI's own state (CLAUDE_CONFIG_DIR: transcripts) for one conversation: each conversation
 * has its own, and a run binds only its own, so no agent reads or writes another's (N1, S2).
 */
export function claudeConfigDir(home: string, ns: Namespace, conversationId: string): string {
  return path.join(namespaceDir(home, ns), 'conversations', conversationId, 'claude');
}

/** Where conversations kept their CLI state before each had its own (read once, to move a transcript out). */
export function sharedClaudeConfigDir(home: string, ns: Namespace): string {
  return path.join(namespaceDir(home, ns), 'claude');
}

/** A folder the person names as a workspace: it must exist and be a folder; returned absolute. */
export function checkWorkspace(dir: string): string {
  const resolved = path.resolve(dir);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(resolved);
  } catch {
    throw new WardError('usage', `workspace ${resolved} does not exist; create the folder first`);
  }
  if (!stat.isDirectory()) throw new WardError('usage', `workspace ${resolved} is not a folder`);
  return resolved;
}
