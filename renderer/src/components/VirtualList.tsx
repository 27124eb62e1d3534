/**
 * Renders only the rows in (and just around) the visible window, through TanStack Virtual, so a
 * conversation of tens of thousands of entries costs what a screenful costs. Row heights are
 * estimated, then measured as rows render (a row that unmounts is no longer observed). The list
 * opens at the newest row and follows new rows, and rows that grow, while the person is at the
 * bottom. Positions are set as element style properties, which the renderer's CSP allows.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useRef, type ReactNode } from 'react';

/** Rows rendered beyond each edge of the viewport, so a quick scroll does not show blank space. */
const OVERSCAN_ROWS = 6;
/** Within this distance of the bottom the person counts as reading the newest row. */
const BOTTOM_SLACK_PX = 48;

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

  return (
    <div ref={viewport} className="vlist" role="log" aria-label={label} aria-live="polite" tabIndex={0}>
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
  );
}
