/** Words in prompts, answers and tools, across the namespace's sessions (full-text search in main), and the hit the chat brings into view. */
import { useEffect, useState } from 'react';
import type { WardApi } from '../../../preload/contract.js';
import type { SearchHitView } from '../../../common/views.js';
import { errorText, unwrap } from '../api.js';
import type { Scope } from './use-conversation-list.js';

const SEARCH_DELAY_MS = 200;

/** A search hit the chat brings into view. */
export interface SearchFocus {
  readonly conversationId: string;
  readonly seq: number;
}

/** `onOpen` opens a chat; a hit opens its chat with the hit in view. */
export function useSearch(api: WardApi, { ready, namespace }: Scope, onOpen: (conversationId: string) => void) {
  const [query, setQuery] = useState('');
  const [hits, setHits] = useState<readonly SearchHitView[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const [focus, setFocus] = useState<SearchFocus | null>(null);

  useEffect(() => {
    const text = query.trim();
    if (!ready || text === '') {
      setHits([]);
      setProblem(null);
      return;
    }
    const timer = setTimeout(() => {
      unwrap(api.search.query({ namespace, query: text }))
        .then((found) => {
          setHits(found);
          setProblem(null);
        })
        .catch((failure: unknown) => {
          setHits([]);
          setProblem(errorText(failure));
        });
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [api, ready, namespace, query]);

  const openHit = (hit: SearchHitView) => {
    setFocus({ conversationId: hit.conversationId, seq: hit.seq });
    onOpen(hit.conversationId);
  };
  return { query, setQuery, hits, problem, focus, openHit };
}
