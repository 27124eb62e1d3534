import { escapeOneLine } from '../../../common/display.js';
import { EXIT } from '../../base/errors.js';
import { MAX_SEARCH_RESULTS } from '../../app/search.js';
import { COMMON_OPTIONS, parseCommandArgs, parseWholeNumber, requirePositional, type Command } from '../command.js';
import { writeJson, writeLine } from '../io.js';

export const searchCommand: Command = {
  name: 'search',
  usage: 'ward search QUERY [--limit N] [--offset N] [--namespace NS] [--json]',
  async run(args, { io, app }) {
    const { values, positionals } = parseCommandArgs(this, args, { ...COMMON_OPTIONS, limit: { type: 'string' }, offset: { type: 'string' } });
    const query = requirePositional(this, positionals, 0, 'a query');
    const store = app().namespaces.readOnly(values.namespace);
    const offset = parseWholeNumber(values.offset, '--offset', 'a whole number');
    const hits = app().search.search(store, query, { limit: parseWholeNumber(values.limit, '--limit', 'a whole number', 20), offset });
    for (const hit of hits) {
      if (values.json) {
        writeJson(io.stdout, hit);
        continue;
      }
      // Matches in [brackets]; the passage reads as one line (line breaks as spaces), model text escaped like every other.
      const snippet = hit.snippet.map((part) => (part.match ? `[${part.text}]` : part.text)).join('').replace(/\s+/g, ' ');
      writeLine(io.stdout, `${hit.conversationId} #${hit.seq} ${hit.type}  ${escapeOneLine(hit.title, 80)}`);
      writeLine(io.stdout, `    ${escapeOneLine(snippet, 300)}`);
    }
    if (!values.json && hits.length === 0) writeLine(io.stderr, 'ward search: no matches');
    if (!values.json && hits.length === MAX_SEARCH_RESULTS) writeLine(io.stderr, `ward search: more may match; see the next page with --offset ${offset + hits.length}`);
    return EXIT.ok;
  },
};
