/**
 * The diff viewer's rows, put in the page without React (issue 26): blocks of rows in view (and a
 * margin around it) are built as plain DOM in the pane's scroll event, before the frame is drawn,
 * and blocks that leave are removed, so a scroll frame does a block's worth of DOM work and no
 * reconciling, and a jump never shows an empty pane. Rows have one fixed height (no wrapping; the
 * pane scrolls sideways), so nothing is measured while scrolling: the pane's height comes from a
 * ResizeObserver, its scroll position is the one value read. Code text goes in as text nodes and
 * highlighted runs as spans with a class (never HTML, U3); rows arrive plain and are redrawn once
 * their chunk is highlighted in idle time (`idle-highlight.ts`).
 */
import type { Line } from '../code/highlight.js';
import type { DiffRow, SplitRow } from '../code/diff-rows.js';
import { CHUNK, chunksOf, IdleHighlighter } from './idle-highlight.js';

/** Kept in step with `.diff-line` in code.css. */
export const DIFF_ROW_PX = 20;
/** Rows a block holds: built, laid out and painted together (a highlighter chunk, so a unified block waits for one). */
const BLOCK = CHUNK;
const BLOCK_PX = BLOCK * DIFF_ROW_PX;
/**
 * Built beyond the pane's edges. Rows are built in the scroll event, before the frame, so this only
 * covers what the compositor scrolls on its own between two frames of the page (a wheel, a drag);
 * every block in the page is repainted with the pane, so more margin costs each frame (a trace:
 * 600 px took about 15% more main-thread time a jump than 200 px).
 */
const MARGIN_PX = 200;
/** The pane's height until it is measured (the viewer's tallest). */
const FIRST_HEIGHT_PX = 900;

const SIGNS: Readonly<Record<DiffRow['kind'], string>> = { add: '+', del: '−', same: ' ', hunk: '', meta: '' };
const LABELS: Readonly<Record<DiffRow['kind'], string | undefined>> = { add: 'added', del: 'removed', same: undefined, hunk: undefined, meta: undefined };

/** What the pane shows: unified rows, or side-by-side pairs of them; `count` rows in all (some may not have arrived). */
export interface DiffData {
  readonly rows: readonly DiffRow[];
  readonly pairs: readonly SplitRow[] | null;
  readonly count: number;
  readonly language: string | null;
}

function element(tag: string, className: string, text?: string): HTMLElement {
  const made = document.createElement(tag);
  made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function gutter(className: string, text: string): HTMLElement {
  const made = element('span', className, text);
  made.setAttribute('aria-hidden', 'true');
  return made;
}


function codeText(line: Line): HTMLElement {
  const text = element('span', 'diff-text');
  for (const segment of line) text.append(segment.className === null ? segment.text : element('span', segment.className, segment.text));
  return text;
}

function fullRow(row: DiffRow): HTMLElement {
  const line = element('div', `diff-line diff-${row.kind}`);
  line.append(element('span', 'diff-text diff-full', row.text));
  return line;
}

/** One side of a row (a unified row is one side itself): its number(s), sign and text; an empty side when `row` is null. */
function side(into: HTMLElement, row: DiffRow | null, line: Line, numbers: 'both' | 'old' | 'new'): HTMLElement {
  if (row === null) {
    into.classList.add('diff-none');
    return into;
  }
  into.classList.add(`diff-${row.kind}`);
  const label = LABELS[row.kind];
  if (label !== undefined) into.setAttribute('aria-label', label);
  if (numbers !== 'new') into.append(gutter('diff-no', row.oldNo === null ? '' : String(row.oldNo)));
  if (numbers !== 'old') into.append(gutter('diff-no', row.newNo === null ? '' : String(row.newNo)));
  into.append(gutter('diff-sign', SIGNS[row.kind]), codeText(line));
  return into;
}

/** Row `index` of the layout; an empty row for one not arrived yet. */
function rowAt(index: number, { rows, pairs }: DiffData, lineAt: (index: number) => Line): HTMLElement {
  if (pairs === null) {
    const row = rows[index];
    if (row === undefined) return element('div', 'diff-line');
    if (row.kind === 'hunk' || row.kind === 'meta') return fullRow(row);
    return side(element('div', 'diff-line diff-side'), row, lineAt(index), 'both');
  }
  const pair = pairs[index];
  if (pair === undefined) return element('div', 'diff-line');
  if (pair.kind !== 'pair') return fullRow(rows[pair.row]!);
  const line = element('div', 'diff-line diff-split');
  line.append(
    side(element('div', 'diff-side'), pair.old === null ? null : rows[pair.old]!, pair.old === null ? [] : lineAt(pair.old), 'old'),
    side(element('div', 'diff-side'), pair.new === null ? null : rows[pair.new]!, pair.new === null ? [] : lineAt(pair.new), 'new'),
  );
  return line;
}

/** The unified rows block `block` shows, or null when it shows none yet. */
function spanOf(block: number, { rows, pairs }: DiffData): readonly [number, number] | null {
  if (pairs === null) return block * BLOCK < rows.length ? [block * BLOCK, Math.min(rows.length, (block + 1) * BLOCK) - 1] : null;
  const shown = pairs.slice(block * BLOCK, (block + 1) * BLOCK).flatMap((pair) => (pair.kind === 'pair' ? [pair.old, pair.new].filter((index) => index !== null) : [pair.row]));
  return shown.length === 0 ? null : [Math.min(...shown), Math.max(...shown)];
}

interface Block {
  readonly element: HTMLElement;
  readonly span: readonly [number, number] | null;
  readonly highlighted: boolean;
}

/** The blocks of one pane: `show` a diff, then it follows the pane's scroll and size until `close`. */
export class DiffBlocks {
  private readonly blocks = new Map<number, Block>();
  private readonly resize: ResizeObserver | null;
  private height = FIRST_HEIGHT_PX;
  private data: DiffData | null = null;
  private highlighter: IdleHighlighter | null = null;

  constructor(
    private readonly pane: HTMLElement,
    private readonly space: HTMLElement,
  ) {
    pane.addEventListener('scroll', this.update, { passive: true });
    // happy-dom (unit tests) has none: the first height stands.
    this.resize =
      typeof ResizeObserver === 'function'
        ? new ResizeObserver(([entry]) => {
            if (entry === undefined || entry.contentRect.height === 0) return;
            this.height = entry.contentRect.height;
            this.update();
          })
        : null;
    this.resize?.observe(pane);
  }

  /** Shows `data` from scratch (new lines, layout or language); the highlighting is kept while the rows are the same. */
  show(data: DiffData): void {
    if (this.data?.rows !== data.rows || this.data.language !== data.language) {
      this.highlighter?.close();
      this.highlighter = new IdleHighlighter(data.rows, data.language, this.highlighted);
    }
    this.data = data;
    for (const block of this.blocks.values()) block.element.remove();
    this.blocks.clear();
    this.update();
  }

  close(): void {
    this.pane.removeEventListener('scroll', this.update);
    this.resize?.disconnect();
    this.highlighter?.close();
  }

  /** Builds the blocks now in view or in the margin, drops the others, and asks for their highlighting, those in view first. */
  private readonly update = (): void => {
    const data = this.data;
    if (data === null) return;
    const top = this.pane.scrollTop;
    const lastBlock = Math.max(0, Math.ceil(data.count / BLOCK) - 1);
    const first = Math.max(0, Math.floor((top - MARGIN_PX) / BLOCK_PX));
    const last = Math.min(lastBlock, Math.floor((top + this.height + MARGIN_PX) / BLOCK_PX));
    for (const [index, block] of this.blocks) {
      if (index >= first && index <= last) continue;
      block.element.remove();
      this.blocks.delete(index);
    }
    for (let index = first; index <= last; index++) if (!this.blocks.has(index)) this.build(index, data);
    const inView = (index: number) => (index + 1) * BLOCK_PX > top && index * BLOCK_PX < top + this.height;
    const order = [...this.blocks.keys()].sort((a, b) => Number(inView(b)) - Number(inView(a)));
    this.highlighter!.want(order.flatMap((index) => (this.blocks.get(index)!.span === null ? [] : [this.blocks.get(index)!.span!])));
  };

  private build(index: number, data: DiffData): void {
    const span = spanOf(index, data);
    const highlighted = span === null || this.highlighter!.done(...span);
    const made = element('div', 'diff-block');
    made.style.top = `${index * BLOCK_PX}px`;
    made.dataset.highlighted = String(highlighted);
    const lineAt = (row: number) => this.highlighter!.lineAt(row);
    for (let row = index * BLOCK; row < Math.min(data.count, (index + 1) * BLOCK); row++) made.append(rowAt(row, data, lineAt));
    const old = this.blocks.get(index);
    if (old === undefined) this.space.insertBefore(made, this.elementAfter(index));
    else old.element.replaceWith(made);
    this.blocks.set(index, { element: made, span, highlighted });
  }

  /**
   * The first block in the page after block `index`, or null: blocks are kept in the page in row order,
   * as a screen reader and a search read them, whatever order a scroll builds them in (Home from the
   * end, scrolled smoothly, builds the second block before the first).
   */
  private elementAfter(index: number): HTMLElement | null {
    let next: number | null = null;
    for (const at of this.blocks.keys()) if (at > index && (next === null || at < next)) next = at;
    return next === null ? null : this.blocks.get(next)!.element;
  }

  /** Redraws the blocks in the page whose rows a highlighting slice finished. */
  private readonly highlighted = (chunks: ReadonlySet<number>): void => {
    if (this.data === null) return;
    for (const [index, block] of this.blocks) {
      if (!block.highlighted && block.span !== null && chunksOf(...block.span).some((chunk) => chunks.has(chunk))) this.build(index, this.data);
    }
  };
}
