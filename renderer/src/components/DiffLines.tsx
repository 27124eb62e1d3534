/**
 * A diff's lines, unified or side by side, syntax highlighted with the file's language and
 * virtualized: only the rows in view (and a margin) are in the page, highlighted a chunk at a
 * time, so a 5,000-line change opens as fast as a short one. Rows have one fixed height (no
 * wrapping; the pane scrolls sideways). A chunk starts its highlighting fresh: a comment opened
 * in an earlier chunk may show plain, never wrong text.
 */
import { memo, useMemo, useState, type ReactNode, type UIEvent } from 'react';
import { escapeForWindow } from '../../../common/display.js';
import { highlightLines, type Line } from '../code/highlight.js';
import { diffRows, splitRows, type DiffRow, type SplitRow } from '../code/diff-rows.js';
import { LineText } from './CodeLines.js';

/** Kept in step with `.diff-line` in code.css. */
export const DIFF_ROW_PX = 20;
const OVERSCAN = 30;
const CHUNK = 100;

const SIGNS: Readonly<Record<DiffRow['kind'], string>> = { add: '+', del: '−', same: ' ', hunk: '', meta: '' };
const LABELS: Readonly<Record<DiffRow['kind'], string | undefined>> = { add: 'added', del: 'removed', same: undefined, hunk: undefined, meta: undefined };

/** Highlighted lines of the unified rows, a chunk at a time, as they are first shown. */
function useHighlighted(rows: readonly DiffRow[], language: string | null): (index: number) => Line {
  // Stable per diff, so rows already on screen are not rendered again as the pane scrolls.
  return useMemo(() => {
    const chunks = new Map<number, Line[]>();
    return (index: number) => {
      const chunk = Math.floor(index / CHUNK);
      let highlighted = chunks.get(chunk);
      if (highlighted === undefined) {
        const code = rows.slice(chunk * CHUNK, (chunk + 1) * CHUNK).map((row) => (row.kind === 'hunk' || row.kind === 'meta' ? '' : escapeForWindow(row.text)));
        highlighted = highlightLines(code.join('\n'), language);
        chunks.set(chunk, highlighted);
      }
      return highlighted[index % CHUNK] ?? [];
    };
  }, [rows, language]);
}

function FullRow({ row }: { row: DiffRow }) {
  return (
    <div className={`diff-line diff-${row.kind}`}>
      <span className="diff-text diff-full">{row.text}</span>
    </div>
  );
}

/** One side of a row: its number(s), sign and text; an empty side when `row` is null. */
function Side({ row, line, numbers }: { row: DiffRow | null; line: Line; numbers: 'both' | 'old' | 'new' }) {
  if (row === null) return <div className="diff-side diff-none" />;
  return (
    <div className={`diff-side diff-${row.kind}`} aria-label={LABELS[row.kind]}>
      {numbers !== 'new' && (
        <span className="diff-no" aria-hidden>
          {row.oldNo ?? ''}
        </span>
      )}
      {numbers !== 'old' && (
        <span className="diff-no" aria-hidden>
          {row.newNo ?? ''}
        </span>
      )}
      <span className="diff-sign" aria-hidden>
        {SIGNS[row.kind]}
      </span>
      <span className="diff-text">
        <LineText line={line} />
      </span>
    </div>
  );
}

interface RowProps {
  readonly index: number;
  readonly rows: readonly DiffRow[];
  readonly pairs: readonly SplitRow[] | null;
  readonly lineAt: (index: number) => Line;
}

/** Row `index` of the layout; memoized, so scrolling renders only the rows that come into view. */
const Row = memo(function Row({ index, rows, pairs, lineAt }: RowProps) {
  const pair = pairs?.[index];
  if (pair === undefined) {
    const row = rows[index]!;
    if (row.kind === 'hunk' || row.kind === 'meta') return <FullRow row={row} />;
    return (
      <div className="diff-line">
        <Side row={row} line={lineAt(index)} numbers="both" />
      </div>
    );
  }
  if (pair.kind !== 'pair') return <FullRow row={rows[pair.row]!} />;
  return (
    <div className="diff-line diff-split">
      <Side row={pair.old === null ? null : rows[pair.old]!} line={pair.old === null ? [] : lineAt(pair.old)} numbers="old" />
      <Side row={pair.new === null ? null : rows[pair.new]!} line={pair.new === null ? [] : lineAt(pair.new)} numbers="new" />
    </div>
  );
});

function DiffLinesView({ lines, language, split }: { lines: readonly string[]; language: string | null; split: boolean }) {
  const rows = useMemo(() => diffRows(lines), [lines]);
  const pairs = useMemo(() => (split ? splitRows(rows) : null), [rows, split]);
  const lineAt = useHighlighted(rows, language);
  const [view, setView] = useState({ top: 0, height: 600 });
  const onScroll = (event: UIEvent<HTMLDivElement>) => setView({ top: event.currentTarget.scrollTop, height: event.currentTarget.clientHeight });

  const count = pairs?.length ?? rows.length;
  const first = Math.max(0, Math.floor(view.top / DIFF_ROW_PX) - OVERSCAN);
  const last = Math.min(count, Math.ceil((view.top + view.height) / DIFF_ROW_PX) + OVERSCAN);
  const shown: ReactNode[] = [];
  for (let index = first; index < last; index++) shown.push(<Row key={index} index={index} rows={rows} pairs={pairs} lineAt={lineAt} />);
  return (
    <div className={`diff-lines${split ? ' diff-lines-split' : ''}`} tabIndex={0} role="region" aria-label={`Diff, ${rows.length.toLocaleString()} lines${split ? ', side by side' : ''}`} onScroll={onScroll} data-testid="diff-lines">
      <div className="diff-space" style={{ height: `${count * DIFF_ROW_PX}px` }}>
        <div className="diff-window" style={{ transform: `translateY(${first * DIFF_ROW_PX}px)` }}>
          {shown}
        </div>
      </div>
    </div>
  );
}

export const DiffLines = memo(DiffLinesView);
