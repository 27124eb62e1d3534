/**
 * A unified diff's lines as rows for the diff viewer: numbered from their hunk headers, a hunk
 * header saying how many unchanged lines it stands for (the runs the diff leaves out), and the
 * same rows paired for the side-by-side view.
 */
import { escapeForWindow } from '../../../common/display.js';

export interface DiffRow {
  readonly kind: 'hunk' | 'add' | 'del' | 'same' | 'meta';
  /** Escaped for a hunk or meta row; a code line's raw text (escaped where it is shown). */
  readonly text: string;
  readonly oldNo: number | null;
  readonly newNo: number | null;
}

/** A side-by-side row: a full-width hunk or meta row, or a pair of unified rows (null: that side has none). */
export type SplitRow = { readonly kind: 'hunk' | 'meta'; readonly row: number } | { readonly kind: 'pair'; readonly old: number | null; readonly new: number | null };

const KINDS: Readonly<Record<string, DiffRow['kind']>> = { '+': 'add', '-': 'del', ' ': 'same', '@': 'hunk' };

function collapsed(hidden: number): string {
  return hidden <= 0 ? '' : `⋯ ${hidden.toLocaleString()} unchanged line${hidden === 1 ? '' : 's'} · `;
}

/** Numbers every line from its hunk header (`@@ -a,b +c,d @@`). */
export function diffRows(lines: readonly string[]): DiffRow[] {
  let oldNo = 1;
  let newNo = 1;
  return lines.map((raw) => {
    const kind = KINDS[raw[0] ?? ''] ?? 'meta';
    // Code lines are escaped when they are first shown (highlighted a chunk at a time), not all up front.
    const text = kind === 'hunk' || kind === 'meta' ? escapeForWindow(raw) : raw.slice(1);
    if (kind === 'hunk') {
      const numbers = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(raw);
      const start = Number(numbers?.[1] ?? 1);
      // A file added or removed whole starts at 0 on its empty side.
      const hidden = start === 0 ? 0 : start - oldNo;
      oldNo = start;
      newNo = Number(numbers?.[2] ?? 1);
      return { kind, text: `${collapsed(hidden)}${text}`, oldNo: null, newNo: null };
    }
    if (kind === 'meta') return { kind, text, oldNo: null, newNo: null };
    const row = { kind, text, oldNo: kind === 'add' ? null : oldNo, newNo: kind === 'del' ? null : newNo };
    if (kind !== 'add') oldNo++;
    if (kind !== 'del') newNo++;
    return row;
  });
}

/** Unchanged lines side by side with themselves; a run of removals beside the run of additions after it. */
export function splitRows(rows: readonly DiffRow[]): SplitRow[] {
  const out: SplitRow[] = [];
  let index = 0;
  while (index < rows.length) {
    const kind = rows[index]!.kind;
    if (kind === 'hunk' || kind === 'meta') out.push({ kind, row: index++ });
    else if (kind === 'same') {
      out.push({ kind: 'pair', old: index, new: index });
      index++;
    } else {
      const dels: number[] = [];
      const adds: number[] = [];
      while (rows[index]?.kind === 'del') dels.push(index++);
      while (rows[index]?.kind === 'add') adds.push(index++);
      for (let pair = 0; pair < Math.max(dels.length, adds.length); pair++) out.push({ kind: 'pair', old: dels[pair] ?? null, new: adds[pair] ?? null });
    }
  }
  return out;
}
