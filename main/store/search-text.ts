/**
 * What the search index holds and what a typed query becomes (E4).
 *
 * Scripts written without spaces (Chinese, Japanese, Korean) are one long "word" to FTS5's
 * unicode61 tokenizer, so `検索` would find nothing inside `日本語のテキストを検索`. Both the
 * indexed text and the query spell such a run as its overlapping pairs of characters (bigrams,
 * as Lucene's CJK analyzer does): a word of two or more characters is then a phrase of adjacent
 * pairs, found anywhere in the run. One index, so hits of both kinds rank together.
 *
 * A query is what a person typed, not FTS5 syntax: `os.path.join`, `api-server`,
 * `parse_config_file()` and `seq > 10` are searched as the words they contain (a run of words
 * joined by punctuation as a phrase). `"…"` quotes a phrase, a trailing `*` makes a prefix, and
 * AND, OR and NOT combine terms where they stand between two terms; elsewhere they are words.
 */

/** What unicode61 counts as a token: letters, numbers, private-use characters. */
const TOKEN = /[\p{L}\p{N}\p{Co}]+/gu;
/** Characters of scripts written without spaces between words. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const CJK_RUNS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
const OPERATORS = new Set(['AND', 'OR', 'NOT']);

/** One searchable unit of a text: where it is, and what the index knows it as. */
export interface TextUnit {
  readonly start: number;
  readonly end: number;
  readonly text: string;
}

/** A CJK run as its overlapping pairs (a single character stays itself), with where each pair is. */
function bigrams(run: string, offset: number): TextUnit[] {
  const chars = [...run];
  if (chars.length === 1) return [{ start: offset, end: offset + run.length, text: run }];
  const units: TextUnit[] = [];
  let at = offset;
  for (let index = 0; index + 1 < chars.length; index++) {
    const pair = chars[index]! + chars[index + 1]!;
    units.push({ start: at, end: at + pair.length, text: pair });
    at += chars[index]!.length;
  }
  return units;
}

/** The units of one unicode61 token: itself, or its CJK runs as bigrams and the rest as words. */
function unitsOfToken(token: string, offset: number): TextUnit[] {
  if (!CJK.test(token)) return [{ start: offset, end: offset + token.length, text: token }];
  const units: TextUnit[] = [];
  let at = 0;
  for (const run of token.matchAll(CJK_RUNS)) {
    if (run.index > at) units.push({ start: offset + at, end: offset + run.index, text: token.slice(at, run.index) });
    units.push(...bigrams(run[0], offset + run.index));
    at = run.index + run[0].length;
  }
  if (at < token.length) units.push({ start: offset + at, end: offset + token.length, text: token.slice(at) });
  return units;
}

/** Every unit of `text`, in order: what the index and the snippet see. */
export function textUnits(text: string): TextUnit[] {
  return [...text.matchAll(TOKEN)].flatMap((match) => unitsOfToken(match[0], match.index));
}

/** The text the index stores for a searchable text: unchanged unless it holds CJK runs. */
export function indexedText(text: string): string {
  if (!CJK.test(text)) return text;
  return text.replace(CJK_RUNS, (run) => ` ${bigrams(run, 0).map((unit) => unit.text).join(' ')} `);
}

export interface QueryTerm {
  /** The units a term's words are, in order: one unit is a word, several a phrase. */
  readonly units: readonly string[];
  readonly prefix: boolean;
}

type Item = { readonly kind: 'term'; readonly term: QueryTerm } | { readonly kind: 'op'; readonly op: string };

function termOf(text: string, prefix: boolean): Item | null {
  const units = textUnits(text).map((unit) => unit.text);
  return units.length === 0 ? null : { kind: 'term', term: { units, prefix } };
}

/** Splits typed text into quoted phrases, operator-looking words and plain chunks. */
function scan(query: string): Item[] {
  const items: Item[] = [];
  const push = (item: Item | null) => item !== null && items.push(item);
  const pattern = /"([^"]*)"(\*?)|(\S+?)(?=\s|"|$)/gu;
  for (const match of query.matchAll(pattern)) {
    if (match[1] !== undefined) push(termOf(match[1], match[2] === '*'));
    else if (OPERATORS.has(match[3]!)) items.push({ kind: 'op', op: match[3]! });
    else push(termOf(match[3]!, match[3]!.endsWith('*')));
  }
  return items;
}

/** An operator counts only between two terms; anywhere else it is searched as a word. */
function settle(items: readonly Item[]): Item[] {
  const settled: Item[] = [];
  items.forEach((item, index) => {
    const between = settled.at(-1)?.kind === 'term' && items[index + 1]?.kind === 'term';
    if (item.kind === 'op' && !between) settled.push({ kind: 'term', term: { units: [item.op.toLowerCase()], prefix: false } });
    else settled.push(item);
  });
  return settled;
}

/** The query's terms, operators aside: what a snippet marks. */
export function queryTerms(query: string): QueryTerm[] {
  return settle(scan(query)).flatMap((item) => (item.kind === 'term' ? [item.term] : []));
}

/** The FTS5 expression for what a person typed, or null when it holds no word at all. */
export function ftsExpression(query: string): string | null {
  const items = settle(scan(query));
  if (!items.some((item) => item.kind === 'term')) return null;
  // Units hold letters and numbers only, so a phrase in double quotes needs no escaping.
  return items.map((item) => (item.kind === 'op' ? item.op : `"${item.term.units.join(' ')}"${item.term.prefix ? ' *' : ''}`)).join(' ');
}
