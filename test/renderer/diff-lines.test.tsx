// @vitest-environment happy-dom
/**
 * The diff viewer's rows (issue 26): a hunk says how many unchanged lines it leaves out, side by
 * side pairs removals with the additions after them, and every code line is escaped where it is
 * shown (D1), in both layouts, though escaping no longer happens up front.
 */
import { describe, expect, it } from 'vitest';
import { diffRows, splitRows } from '../../renderer/src/code/diff-rows.js';
import { DiffLines } from '../../renderer/src/components/DiffLines.js';
import { render } from './render.js';

const LINES = ['@@ -1,3 +1,3 @@', ' same', '-old \u202Egnirts\u001b[31m', '+new', '@@ -40,2 +40,2 @@', ' tail', '-x', '+y', '+z'];

describe('diff rows', () => {
  it('test_hunks_count_the_unchanged_lines_they_leave_out_and_side_by_side_pairs_each_removal_with_the_addition_after_it', () => {
    const rows = diffRows(LINES);
    expect(rows.filter((row) => row.kind === 'hunk').map((row) => row.text)).toEqual(['@@ -1,3 +1,3 @@', '⋯ 37 unchanged lines · @@ -40,2 +40,2 @@']);
    expect(splitRows(rows)).toEqual([
      { kind: 'hunk', row: 0 },
      { kind: 'pair', old: 1, new: 1 },
      { kind: 'pair', old: 2, new: 3 },
      { kind: 'hunk', row: 4 },
      { kind: 'pair', old: 5, new: 5 },
      { kind: 'pair', old: 6, new: 7 },
      { kind: 'pair', old: null, new: 8 },
    ]);
    expect(diffRows(['@@ -0,0 +1,2 @@', '+a', '+b'])[0]!.text).toBe('@@ -0,0 +1,2 @@');
  });

  it('test_a_code_line_is_escaped_where_it_is_shown_unified_and_side_by_side', async () => {
    for (const split of [false, true]) {
      const view = await render(<DiffLines lines={LINES} language="typescript" split={split} />);
      const text = view.container.textContent!;
      expect(text).toContain('gnirts');
      expect(text).not.toContain('\u202E');
      expect(text).not.toContain('\u001b');
      expect(text).toContain('\\u{202e}');
      await view.unmount();
    }
  });

  it('test_rows_stay_in_the_page_in_row_order_whatever_order_a_scroll_builds_them_in', async () => {
    const lines = ['@@ -0,0 +1,2000 @@', ...Array.from({ length: 2_000 }, (_, index) => `+line ${index + 1}`)];
    const view = await render(<DiffLines lines={lines} language={null} split={false} />);
    const pane = view.container.querySelector<HTMLElement>('.diff-lines')!;
    const scrollTo = (top: number) => {
      pane.scrollTop = top;
      pane.dispatchEvent(new Event('scroll'));
    };
    // Home from the end, scrolled smoothly: a frame on the way builds the second block before the first.
    scrollTo(20_000);
    scrollTo(700);
    scrollTo(0);
    const numbers = [...pane.querySelectorAll('.diff-add')].map((row) => Number(/^\d+/.exec(row.textContent!)![0]));
    expect(numbers[0]).toBe(1);
    expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
    await view.unmount();
  });
});
