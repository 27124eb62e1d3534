/**
 * A diff's lines, unified or side by side, virtualized in blocks of rows: only the blocks in view
 * (and one screen's margin) are in the page, each rendered and laid out once when it comes into
 * view, so a 5,000-line change opens as fast as a short one and a scroll frame renders at most a
 * block. A block comes in as plain escaped text and gets its syntax highlighting in idle time
 * (`use-idle-highlight.ts`), so a scroll frame never waits for the highlighter. Rows have one fixed
 * height (no wrapping; the pane scrolls sideways), so nothing is measured while scrolling.
 * The lines may be the diff's first screen only (`total` says how many there are): rows not
 * there yet are empty until they arrive.
 */
import { memo, startTransition, useMemo, useRef, useState, type ReactNode, type UIEvent } from 'react';
import type { Line } from '../code/highlight.js';
import { diffRows, splitRows, type DiffRow, type SplitRow } from '../code/diff-rows.js';
import { LineText } from './CodeLines.js';
import { CHUNK, useIdleHighlight } from './use-idle-highlight.js';

/** Kept in step with `.diff-line` in code.css. */
export const DIFF_ROW_PX = 20;
/** Rows a block holds: rendered and laid out together (a highlighter chunk, so a unified block waits for one). */
const BLOCK = CHUNK;
const BLOCK_PX = BLOCK * DIFF_ROW_PX;
/** Shown beyond the pane's edges, so a block is in the page before it scrolls into view. */
const MARGIN_PX = 600;
/** The pane's height until it is measured (the viewer's tallest). */
const FIRST_HEIGHT_PX = 900;

const SIGNS: Readonly<Record<DiffRow['kind'], string>> = { add: '+', del: '−', same: ' ', hunk: '', meta: '' };
const LABELS: Readonly<Record<DiffRow['kind'], string | undefined>> = { add: 'added', del: 'removed', same: undefined, hunk: undefined, meta: undefined };

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

interface RowsProps {
  readonly rows: readonly DiffRow[];
  readonly pairs: readonly SplitRow[] | null;
  readonly lineAt: (index: number) => Line;
}

/** Row `index` of the layout; an empty row for one not arrived yet. */
function Row({ index, rows, pairs, lineAt }: RowsProps & { readonly index: number }) {
  if (pairs === null) {
    const row = rows[index];
    if (row === undefined) return <div className="diff-line" />;
    if (row.kind === 'hunk' || row.kind === 'meta') return <FullRow row={row} />;
    return (
      <div className="diff-line">
        <Side row={row} line={lineAt(index)} numbers="both" />
      </div>
    );
  }
  const pair = pairs[index];
  if (pair === undefined) return <div className="diff-line" />;
  if (pair.kind !== 'pair') return <FullRow row={rows[pair.row]!} />;
  return (
    <div className="diff-line diff-split">
      <Side row={pair.old === null ? null : rows[pair.old]!} line={pair.old === null ? [] : lineAt(pair.old)} numbers="old" />
      <Side row={pair.new === null ? null : rows[pair.new]!} line={pair.new === null ? [] : lineAt(pair.new)} numbers="new" />
    </div>
  );
}

/**
 * Rows `block * BLOCK` on, placed where they belong in the pane; memoized, so it renders once while
 * in view, and once more when its highlighting is done.
 */
const Block = memo(function Block({ block, count, highlighted, ...rows }: RowsProps & { readonly block: number; readonly count: number; readonly highlighted: boolean }) {
  const shown: ReactNode[] = [];
  for (let index = block * BLOCK; index < Math.min(count, (block + 1) * BLOCK); index++) shown.push(<Row key={index} index={index} {...rows} />);
  return (
    <div className="diff-block" style={{ top: `${block * BLOCK_PX}px` }} data-highlighted={highlighted}>
      {shown}
    </div>
  );
});

/** The blocks in view and in the margin around it, as `first:last`: a string, so a scroll that shows no new block changes no state. */
function blocksAround(top: number, height: number, count: number): string {
  const last = Math.max(0, Math.ceil(count / BLOCK) - 1);
  return `${Math.max(0, Math.floor((top - MARGIN_PX) / BLOCK_PX))}:${Math.min(last, Math.floor((top + height + MARGIN_PX) / BLOCK_PX))}`;
}

/** The unified rows block `block` shows (first:last), or '' when it shows none yet. */
function spanOf(block: number, rows: readonly DiffRow[], pairs: readonly SplitRow[] | null): string {
  if (pairs === null) return block * BLOCK < rows.length ? `${block * BLOCK}:${Math.min(rows.length, (block + 1) * BLOCK) - 1}` : '';
  const shown = pairs.slice(block * BLOCK, (block + 1) * BLOCK).flatMap((pair) => (pair.kind === 'pair' ? [pair.old, pair.new].filter((index) => index !== null) : [pair.row]));
  return shown.length === 0 ? '' : `${Math.min(...shown)}:${Math.max(...shown)}`;
}

/** The blocks of `first:last`, those in view (from `top`, `height`) first. */
function nearestFirst(range: string, top: number, height: number): number[] {
  const [first, last] = range.split(':').map(Number) as [number, number];
  const inView = (block: number) => (block + 1) * BLOCK_PX > top && block * BLOCK_PX < top + height;
  const blocks = Array.from({ length: last - first + 1 }, (_, offset) => first + offset);
  return [...blocks.filter(inView), ...blocks.filter((block) => !inView(block))];
}

function DiffLinesView({ lines, total, language, split }: { lines: readonly string[]; total?: number; language: string | null; split: boolean }) {
  const rows = useMemo(() => diffRows(lines), [lines]);
  const pairs = useMemo(() => (split ? splitRows(rows) : null), [rows, split]);
  // Until the rest arrives, side by side has at most as many rows as the whole diff.
  const lineCount = Math.max(total ?? 0, lines.length);
  const count = lines.length < lineCount ? Math.max(pairs?.length ?? 0, lineCount) : (pairs?.length ?? rows.length);
  const [view, setView] = useState({ top: 0, height: FIRST_HEIGHT_PX });
  const range = blocksAround(view.top, view.height, count);
  const shownRange = useRef(range);
  shownRange.current = range;
  const onScroll = (event: UIEvent<HTMLDivElement>) => {
    const next = { top: event.currentTarget.scrollTop, height: event.currentTarget.clientHeight };
    // A scroll that brings no new block into view changes nothing, so nothing renders; a new
    // block renders between frames (a transition React interrupts for the next scroll), the margin
    // showing until it is there.
    if (blocksAround(next.top, next.height, count) !== shownRange.current) startTransition(() => setView(next));
  };
  const spans = useMemo(() => nearestFirst(range, view.top, view.height).map((block) => [block, spanOf(block, rows, pairs)] as const), [range, view, rows, pairs]);
  const { lineAt, done } = useIdleHighlight(rows, language, spans.map(([, span]) => span).join(','));
  const shown: ReactNode[] = [];
  for (const [block, span] of [...spans].sort(([a], [b]) => a - b)) {
    const [first, last] = span === '' ? [0, -1] : span.split(':').map(Number);
    shown.push(<Block key={block} block={block} count={count} rows={rows} pairs={pairs} lineAt={lineAt} highlighted={done(first!, last!)} />);
  }
  return (
    <div className={`diff-lines${split ? ' diff-lines-split' : ''}`} tabIndex={0} role="region" aria-label={`Diff, ${lineCount.toLocaleString()} lines${split ? ', side by side' : ''}`} onScroll={onScroll} data-testid="diff-lines">
      <div className="diff-space" style={{ height: `${count * DIFF_ROW_PX}px` }}>
        {shown}
      </div>
    </div>
  );
}

export const DiffLines = memo(DiffLinesView);
