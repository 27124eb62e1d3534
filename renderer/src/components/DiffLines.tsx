/**
 * A unified diff's lines, syntax highlighted with the file's language and virtualized: only the
 * lines in view (and a margin) are in the page, highlighted a chunk at a time, so a 5,000-line
 * change opens as fast as a short one. Rows have one fixed height (no wrapping; the pane scrolls
 * sideways). A chunk starts its highlighting fresh: a comment opened in an earlier chunk may
 * show plain, never wrong text.
 */
import { memo, useMemo, useRef, useState, type UIEvent } from 'react';
import { escapeForWindow } from '../../../common/display.js';
import { highlightLines, type Line } from '../code/highlight.js';
import { LineText } from './CodeLines.js';

/** Kept in step with `.diff-line` in code.css. */
export const DIFF_ROW_PX = 20;
const OVERSCAN = 30;
const CHUNK = 100;

interface DiffRow {
  readonly kind: 'hunk' | 'add' | 'del' | 'same' | 'meta';
  readonly text: string;
  readonly oldNo: number | null;
  readonly newNo: number | null;
}

const KINDS: Readonly<Record<string, DiffRow['kind']>> = { '+': 'add', '-': 'del', ' ': 'same', '@': 'hunk' };

/** Numbers every line from its hunk header (`@@ -a,b +c,d @@`). */
export function diffRows(lines: readonly string[]): DiffRow[] {
  let oldNo = 0;
  let newNo = 0;
  return lines.map((raw) => {
    const kind = KINDS[raw[0] ?? ''] ?? 'meta';
    const text = escapeForWindow(kind === 'hunk' || kind === 'meta' ? raw : raw.slice(1));
    if (kind === 'hunk') {
      const numbers = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(raw);
      oldNo = Number(numbers?.[1] ?? 1);
      newNo = Number(numbers?.[2] ?? 1);
      return { kind, text, oldNo: null, newNo: null };
    }
    if (kind === 'meta') return { kind, text, oldNo: null, newNo: null };
    const row = { kind, text, oldNo: kind === 'add' ? null : oldNo, newNo: kind === 'del' ? null : newNo };
    if (kind !== 'add') oldNo++;
    if (kind !== 'del') newNo++;
    return row;
  });
}

const SIGNS: Readonly<Record<DiffRow['kind'], string>> = { add: '+', del: '−', same: ' ', hunk: '', meta: '' };
const LABELS: Readonly<Record<DiffRow['kind'], string | undefined>> = { add: 'added', del: 'removed', same: undefined, hunk: undefined, meta: undefined };

function DiffLinesView({ lines, language }: { lines: readonly string[]; language: string | null }) {
  const rows = useMemo(() => diffRows(lines), [lines]);
  const chunks = useRef(new Map<number, Line[]>());
  const seen = useRef(rows);
  if (seen.current !== rows) {
    seen.current = rows;
    chunks.current = new Map();
  }
  const [view, setView] = useState({ top: 0, height: 600 });
  const onScroll = (event: UIEvent<HTMLDivElement>) => setView({ top: event.currentTarget.scrollTop, height: event.currentTarget.clientHeight });

  const first = Math.max(0, Math.floor(view.top / DIFF_ROW_PX) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((view.top + view.height) / DIFF_ROW_PX) + OVERSCAN);
  const lineAt = (index: number): Line => {
    const chunk = Math.floor(index / CHUNK);
    let highlighted = chunks.current.get(chunk);
    if (highlighted === undefined) {
      const code = rows.slice(chunk * CHUNK, (chunk + 1) * CHUNK).map((row) => (row.kind === 'hunk' || row.kind === 'meta' ? '' : row.text));
      highlighted = highlightLines(code.join('\n'), language);
      chunks.current.set(chunk, highlighted);
    }
    return highlighted[index % CHUNK] ?? [];
  };
  const shown = [];
  for (let index = first; index < last; index++) {
    const row = rows[index]!;
    shown.push(
      <div key={index} className={`diff-line diff-${row.kind}`} aria-label={LABELS[row.kind]}>
        <span className="diff-no" aria-hidden>
          {row.oldNo ?? ''}
        </span>
        <span className="diff-no" aria-hidden>
          {row.newNo ?? ''}
        </span>
        <span className="diff-sign" aria-hidden>
          {SIGNS[row.kind]}
        </span>
        <span className="diff-text">{row.kind === 'hunk' || row.kind === 'meta' ? row.text : <LineText line={lineAt(index)} />}</span>
      </div>,
    );
  }
  return (
    <div className="diff-lines" tabIndex={0} role="region" aria-label={`Diff, ${rows.length.toLocaleString()} lines`} onScroll={onScroll} data-testid="diff-lines">
      <div className="diff-space" style={{ height: `${rows.length * DIFF_ROW_PX}px` }}>
        <div className="diff-window" style={{ transform: `translateY(${first * DIFF_ROW_PX}px)` }}>
          {shown}
        </div>
      </div>
    </div>
  );
}

export const DiffLines = memo(DiffLinesView);
