/** E4: `ward search` and the desktop's session search: one namespace, ranked, one page at a time. */
import type { SearchHitView } from '../../common/views.js';
import type { NamespaceStore } from '../store/namespace-store.js';
import type { SearchOptions } from '../store/search.js';

/** The most hits one page holds: a full page means there may be more. */
export { MAX_SEARCH_RESULTS } from '../store/search.js';

export class SearchService {
  search(store: NamespaceStore, query: string, options: SearchOptions = {}): SearchHitView[] {
    const titles = new Map<string, string>();
    const titleOf = (id: string) => {
      let title = titles.get(id);
      if (title === undefined) {
        title = store.conversations.get(id).title;
        titles.set(id, title);
      }
      return title;
    };
    return store.search.query(query, options).map((hit) => ({ ...hit, title: titleOf(hit.conversationId) }));
  }
}
