/**
 * The sessions of a namespace, newest activity first (filtered by the search box's words), what
 * the namespace used today, and its agents. `refresh` re-reads the list and the usage after a run
 * or a new chat changed them.
 */
import { useCallback, useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { AgentView, ConversationView, UsageSummaryView } from '../../../common/views.js';
import { escapeLineForWindow } from '../../../common/display.js';
import { unwrap } from '../api.js';
import type { Fail } from './use-window-error.js';

/** A namespace main has said this Ward offers (`ready`), or none yet. */
export interface Scope {
  readonly ready: boolean;
  readonly namespace: string;
}

const LIST_DELAY_MS = 120;

const newestFirst = (a: ConversationView, b: ConversationView) => (a.lastActivityAt < b.lastActivityAt ? 1 : a.lastActivityAt > b.lastActivityAt ? -1 : 0);

/** A chat's title as a one-line window text, or "another chat" when the list does not hold it. */
export function titleOf(conversations: readonly ConversationView[], id: string | null): string {
  const found = conversations.find((conversation) => conversation.id === id);
  return found === undefined ? 'another chat' : escapeLineForWindow(found.title, 80);
}

export function useConversationList(api: WardApi, { ready, namespace }: Scope, query: string, fail: Fail) {
  const [conversations, setConversations] = useState<readonly ConversationView[]>([]);
  const [today, setToday] = useState<UsageSummaryView['total'] | null>(null);
  const [listTick, setListTick] = useState(0);
  const refresh = useCallback(() => setListTick((tick) => tick + 1), []);

  useEffect(() => {
    if (!ready) return;
    const timer = setTimeout(() => {
      unwrap(api.conversations.list({ namespace, ...(query.trim() === '' ? {} : { query: query.trim() }) }))
        .then((list) => setConversations([...list].sort(newestFirst)))
        .catch(fail);
    }, LIST_DELAY_MS);
    return () => clearTimeout(timer);
  }, [api, ready, namespace, query, listTick, fail]);

  useEffect(() => {
    if (!ready) return;
    unwrap(api.usage.summary({ namespace, since: new Date().toISOString().slice(0, 10) }))
      .then((summary) => setToday(summary.total))
      .catch(fail);
  }, [api, ready, namespace, listTick, fail]);

  return { conversations, today, refresh };
}

/** The namespace's agents, read again whenever the page changes (an agent published on the Agents page shows in New chat). */
export function useAgents(api: WardApi, { ready, namespace }: Scope, page: string, fail: Fail): readonly AgentView[] {
  const [agents, setAgents] = useState<readonly AgentView[]>([]);
  useEffect(() => {
    if (!ready) return;
    unwrap(api.agents.list({ namespace }))
      .then(setAgents)
      .catch(fail);
  }, [api, ready, namespace, page, fail]);
  return agents;
}
