/**
 * Renders only the rows in (and just around) the visible window, through TanStack Virtual, so a
 * conversation of tens of thousands of entries costs what a screenful costs. Row heights are
 * estimated, then measured as rows render (a row that unmounts is no longer observed). The list
 * opens at the newest row and follows new rows, and rows that grow, while the person is at the
 * bottom; rows arriving above (the history behind the latest messages) keep the rows in view where
 * they are. Scrolled up, "Jump to latest" brings the newest row back. Positions are set as element
 * style properties, which the renderer's CSP allows.
 *
 * Not a live region: the window's one status region announces what finished or waits.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { ArrowDown } from 'lucide-react';
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type ReactNode } from 'react';

/** Rows rendered beyond each edge of the viewport, so a quick scroll does not show blank space. */
const OVERSCAN_ROWS = 24;
/** Within this distance of the bottom the person counts as reading the newest row. */
const BOTTOM_SLACK_PX = 48;
/** Further than this from the bottom, "Jump to latest" is offered. */
const JUMP_AFTER_PX = 400;

export interface VirtualListProps<T> {
  readonly items: readonly T[];
  readonly getKey: (item: T) => string;
  readonly estimateHeight: (item: T) => number;
  readonly renderItem: (item: T) => ReactNode;
  readonly label: string;
  /** A row to bring into view and mark (a search hit); null for none. */
  readonly focusIndex?: number | null;
}

export function VirtualList<T>({ items, getKey, estimateHeight, renderItem, label, focusIndex = null }: VirtualListProps<T>) {
  const viewport = useRef<HTMLDivElement>(null);
  const [away, setAway] = useState(false);
  // Stable between renders with the same items: a new key function makes the virtualizer re-sum every row.
  const keyAt = useCallback((index: number) => getKey(items[index]!), [items, getKey]);
  const virtualizer = useVirtualizer({
    count: items.length,
    getScrollElement: () => viewport.current,
    getItemKey: keyAt,
    estimateSize: (index) => estimateHeight(items[index]!),
    overscan: OVERSCAN_ROWS,
    // Past the end, so the first window rendered is already the newest rows (the browser clamps it).
    initialOffset: Number.MAX_SAFE_INTEGER,
    anchorTo: 'end',
    followOnAppend: true,
    scrollEndThreshold: BOTTOM_SLACK_PX,
  });
  useLayoutEffect(() => virtualizer.scrollToEnd(), [virtualizer]);
  useEffect(() => {
    if (focusIndex !== null && focusIndex < items.length) virtualizer.scrollToIndex(focusIndex, { align: 'center' });
    // Only a new focus scrolls (not every new row): rows arriving later must not pull the view back to it.
  }, [focusIndex, virtualizer]);

  useEffect(() => {
    const element = viewport.current;
    if (element === null) return;
    const onScroll = () => setAway(element.scrollHeight - element.scrollTop - element.clientHeight > JUMP_AFTER_PX);
    element.addEventListener('scroll', onScroll, { passive: true });
    return () => element.removeEventListener('scroll', onScroll);
  }, []);

  return (
    <div className="vlist-frame">
      <div ref={viewport} className="vlist" role="region" aria-label={label} tabIndex={0}>
        <div className="vlist-space" role="list" style={{ height: `${virtualizer.getTotalSize()}px` }}>
          {virtualizer.getVirtualItems().map((row) => (
            <div
              key={row.key}
              data-index={row.index}
              ref={virtualizer.measureElement}
              className={row.index === focusIndex ? 'vrow vrow-focus' : 'vrow'}
              role="listitem"
              style={{ transform: `translateY(${row.start}px)` }}
            >
              {renderItem(items[row.index]!)}
            </div>
          ))}
        </div>
      </div>
      {away && (
        <button
          type="button"
          className="jump-latest"
          onClick={() => {
            virtualizer.scrollToEnd();
            setAway(false);
          }}
        >
          <ArrowDown size={14} aria-hidden /> Jump to latest
        </button>
      )}
    </div>
  );
}
