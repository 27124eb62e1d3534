import { escapeOneLine } from '../../../preload/display.js';
import { EXIT, WardError } from '../../base/errors.js';
import { MAX_SEARCH_RESULTS } from '../../store/search.js';
import { COMMON_OPTIONS, parseCommandArgs, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

function count(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d{1,6}$/.test(value)) throw new WardError('usage', `${flag} takes a whole number, not ${JSON.stringify(value.slice(0, 20))}`);
  return Number(value);
}

export const searchCommand: Command = {
  name: 'search',
  summary: 'find words in prompts, answers, tool names and tool previews across a namespace (best first)',
  usage: 'ward search QUERY [--limit N] [--offset N] [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { ...COMMON_OPTIONS, limit: { type: 'string' }, offset: { type: 'string' } });
    const query = requirePositional(this, positionals, 0, 'a query');
    const store = app().namespaces.readOnly(values.namespace);
    const hits = app().search.search(store, query, { limit: count(values.limit, '--limit', 20), offset: count(values.offset, '--offset', 0) });
    for (const hit of hits) {
      if (values.json) {
        writeJson(io.stdout, hit);
        continue;
      }
      // Matches in [brackets]; the snippet is model text, escaped like every other.
      const snippet = hit.snippet.map((part) => (part.match ? `[${part.text}]` : part.text)).join('');
      writeLine(io.stdout, `${hit.conversationId} #${hit.seq} ${hit.type}  ${escapeOneLine(hit.title, 80)}`);
      writeLine(io.stdout, `    ${escapeOneLine(snippet, 300)}`);
    }
    if (!values.json && hits.length === 0) writeLine(io.stderr, 'ward search: no matches');
    if (!values.json && hits.length === MAX_SEARCH_RESULTS) writeLine(io.stderr, `ward search: more may match; see the next page with --offset ${count(values.offset, '--offset', 0) + hits.length}`);
    return EXIT.ok;
  },
};
