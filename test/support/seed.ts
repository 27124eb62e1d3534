import { DataFolder } from '../../main/store/data-folder.js';
import { parseNamespace } from '../../main/namespaces/namespace.js';
import type { NamespaceStore } from '../../main/store/namespace-store.js';
import type { Conversation } from '../../main/store/conversations.js';

/** A namespace store with one published agent and one conversation, in a real data folder. */
export function seedConversation(home: string, namespace = 'default'): { core: DataFolder; store: NamespaceStore; conversation: Conversation } {
  const core = new DataFolder(home);
  const store = core.store(parseNamespace(namespace));
  const agent = store.agents.find('helper') ?? store.agents.publish('helper', { instructions: 'be brief' });
  const conversation = store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: 'first chat' });
  return { core, store, conversation };
}
