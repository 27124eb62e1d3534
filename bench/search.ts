import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { journalEvent } from '../common/events.js';
import { SearchService } from '../main/app/search.js';
import { parseNamespace } from '../main/namespaces/namespace.js';
import { DataFolder } from '../main/store/data-folder.js';
import { percentile, round, timeMs } from './stats.js';

const EVENTS = 100_000;
const CONVERSATIONS = 100;
const BATCH = 500;
const REPEATS = 15;
/** Common words match tens of thousands of events (the ranking's worst case), rare ones a handful. */
const QUERIES = ['lisbon', 'weather', 'invoice', 'zebra42', '"quarterly report"', 'deploy*', 'lisbon AND weather'];

/** A vocabulary where a few words are everywhere and most are rare (Zipf-like), so queries see both. */
function text(i: number): string {
  const words: string[] = [];
  for (let k = 0; k < 12; k++) {
    const rank = Math.floor(1 / ((((i * 7919 + k * 104_729) % 9973) + 1) / 9973) ** 0.8) % 4000;
    words.push(`w${rank}`);
  }
  if (i % 3 === 0) words.push('lisbon');
  if (i % 5 === 0) words.push('weather');
  if (i % 97 === 0) words.push('invoice');
  if (i === 77_777) words.push('zebra42');
  if (i % 400 === 0) words.push('quarterly report');
  if (i % 50 === 0) words.push(`deployment${i % 7}`);
  return words.join(' ');
}

/**
 * E4: the first page (20 hits, ranked, with snippets and the events' type and time) of a search
 * over 100,000 journaled prompts, answers and tool results in 100 conversations, against the raw
 * FTS5 query for the same ranked page (its row ids only), in the same run.
 */
export async function benchSearch(): Promise<Record<string, unknown>> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ward-bench-search-'));
  const folder = new DataFolder(home);
  try {
    const store = folder.store(parseNamespace('bench'));
    const agent = store.agents.publish('bench', { instructions: '' });
    const ids = Array.from({ length: CONVERSATIONS }, (_, n) => store.conversations.create({ agentId: agent.agentId, agentVersion: agent.version, title: `chat ${n}` }).id);
    for (let start = 0; start < EVENTS; start += BATCH) {
      const id = ids[(start / BATCH) % CONVERSATIONS]!;
      store.journal.appendMany(
        id,
        Array.from({ length: BATCH }, (_, k) => {
          const i = start + k;
          if (i % 4 === 0) return journalEvent('user_prompt', { text: text(i) });
          if (i % 4 === 3) return journalEvent('tool_result', { toolUseId: `t${i}`, tool: 'lookup', ok: true, bytes: 10, durationMs: 1, errorCode: null, preview: text(i), previewTruncated: false });
          return journalEvent('assistant_text', { text: text(i) });
        }),
      );
    }
    const search = new SearchService();
    const raw = store.db.prepare('SELECT rowid FROM events_fts WHERE events_fts MATCH ? ORDER BY rank LIMIT 20').raw(true);
    const wardSamples: number[] = [];
    const rawSamples: number[] = [];
    const perQuery: Record<string, { hits: number; wardP50Ms: number; rawP50Ms: number }> = {};
    for (const query of QUERIES) {
      const mine: number[] = [];
      const theirs: number[] = [];
      let hits = 0;
      for (let r = 0; r < REPEATS; r++) {
        mine.push(timeMs(() => (hits = search.search(store, query).length)));
        theirs.push(timeMs(() => raw.all(query)));
      }
      wardSamples.push(...mine);
      rawSamples.push(...theirs);
      perQuery[query] = { hits, wardP50Ms: round(percentile(mine, 50), 2), rawP50Ms: round(percentile(theirs, 50), 2) };
    }
    const p50 = percentile(wardSamples, 50);
    return {
      events: EVENTS,
      conversations: CONVERSATIONS,
      queries: perQuery,
      firstPageP50Ms: round(p50, 2),
      firstPageP95Ms: round(percentile(wardSamples, 95), 2),
      baselineRawFts5P50Ms: round(percentile(rawSamples, 50), 2),
      ratioToBaseline: round(p50 / percentile(rawSamples, 50), 2),
      target: 'first page p50 <= 50 ms',
      pass: p50 <= 50,
    };
  } finally {
    folder.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
}
