/**
 * A diff's lines, unified or side by side, virtualized in blocks of rows: React renders the pane,
 * and `diff-blocks.ts` puts in it only the blocks in view (and a margin around it), built as plain
 * DOM in the scroll event, so a 5,000-line change opens as fast as a short one and a scroll frame
 * does a block's worth of DOM work (issue 26). The lines may be the diff's first screen only
 * (`total` says how many there are): rows not there yet are empty until they arrive.
 */
import { memo, useLayoutEffect, useMemo, useRef } from 'react';
import { diffRows, splitRows } from '../code/diff-rows.js';
import { DIFF_ROW_PX, DiffBlocks } from './diff-blocks.js';

function DiffLinesView({ lines, total, language, split }: { lines: readonly string[]; total?: number; language: string | null; split: boolean }) {
  const rows = useMemo(() => diffRows(lines), [lines]);
  const pairs = useMemo(() => (split ? splitRows(rows) : null), [rows, split]);
  // Until the rest arrives, side by side has at most as many rows as the whole diff.
  const lineCount = Math.max(total ?? 0, lines.length);
  const count = lines.length < lineCount ? Math.max(pairs?.length ?? 0, lineCount) : (pairs?.length ?? rows.length);
  const pane = useRef<HTMLDivElement>(null);
  const space = useRef<HTMLDivElement>(null);
  const blocks = useRef<DiffBlocks | null>(null);
  useLayoutEffect(() => {
    const made = new DiffBlocks(pane.current!, space.current!);
    blocks.current = made;
    return () => made.close();
  }, []);
  // Before the frame is painted, so the rows arrive with the pane.
  useLayoutEffect(() => blocks.current!.show({ rows, pairs, count, language }), [rows, pairs, count, language]);
  return (
    <div className="diff-frame">
      <div ref={pane} className={`diff-lines${split ? ' diff-lines-split' : ''}`} tabIndex={0} role="region" aria-label={`Diff, ${lineCount.toLocaleString()} lines${split ? ', side by side' : ''}`} data-testid="diff-lines">
        {/* Its rows are diff-blocks.ts's: React gives it no children, so it never touches them. */}
        <div ref={space} className="diff-space" style={{ height: `${count * DIFF_ROW_PX}px` }} />
      </div>
    </div>
  );
}

export const DiffLines = memo(DiffLinesView);
