/**
 * Renders only the rows in (and just around) the visible window, so a conversation of tens of
 * thousands of entries costs what a screenful costs. Row heights are estimated, then measured
 * as rows render; the list stays pinned to the bottom while the person is at the bottom.
 */
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type ReactNode } from 'react';

const OVERSCAN_PX = 600;
const BOTTOM_SLACK_PX = 48;

export interface VirtualListProps<T> {
  readonly items: readonly T[];
  readonly getKey: (item: T) => string;
  readonly estimateHeight: (item: T) => number;
  readonly renderItem: (item: T) => ReactNode;
  readonly label: string;
}

/** Index of the last offset ≤ target (offsets ascending, offsets[0] = 0). */
function lastAtOrBefore(offsets: Float64Array, count: number, target: number): number {
  let low = 0;
  let high = count - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (offsets[mid]! <= target) low = mid;
    else high = mid - 1;
  }
  return low;
}

export function VirtualList<T>({ items, getKey, estimateHeight, renderItem, label }: VirtualListProps<T>) {
  const viewport = useRef<HTMLDivElement>(null);
  const heights = useRef(new Map<string, number>());
  const pinned = useRef(true);
  const [measureVersion, setMeasureVersion] = useState(0);
  const [scrollTop, setScrollTop] = useState(0);
  const [viewportHeight, setViewportHeight] = useState(800);

  const offsets = useMemo(() => {
    const out = new Float64Array(items.length + 1);
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      out[i + 1] = out[i]! + (heights.current.get(getKey(item)) ?? estimateHeight(item));
    }
    return out;
    // measureVersion is listed because heights is a ref: re-sum when a measurement changed.
  }, [items, getKey, estimateHeight, measureVersion]);
  const total = offsets[items.length] ?? 0;

  const observer = useMemo(
    () =>
      typeof ResizeObserver === 'undefined'
        ? null
        : new ResizeObserver((entries) => {
            let changed = false;
            for (const entry of entries) {
              const key = (entry.target as HTMLElement).dataset.key;
              const height = Math.ceil(entry.contentRect.height);
              if (key !== undefined && height > 0 && heights.current.get(key) !== height) {
                heights.current.set(key, height);
                changed = true;
              }
            }
            if (changed) setMeasureVersion((version) => version + 1);
          }),
    [],
  );
  useEffect(() => () => observer?.disconnect(), [observer]);

  const measureRef = useCallback(
    (element: HTMLDivElement | null) => {
      if (element !== null) observer?.observe(element);
    },
    [observer],
  );

  useLayoutEffect(() => {
    const element = viewport.current;
    if (element === null) return;
    setViewportHeight(element.clientHeight || 800);
    if (pinned.current) {
      element.scrollTop = Math.max(0, total - element.clientHeight);
      setScrollTop(element.scrollTop);
    }
  }, [total]);

  const onScroll = () => {
    const element = viewport.current;
    if (element === null) return;
    pinned.current = element.scrollTop + element.clientHeight >= element.scrollHeight - BOTTOM_SLACK_PX;
    setScrollTop(element.scrollTop);
    setViewportHeight(element.clientHeight || viewportHeight);
  };

  let first = 0;
  let last = -1;
  if (items.length > 0) {
    first = lastAtOrBefore(offsets, items.length, Math.max(0, scrollTop - OVERSCAN_PX));
    last = lastAtOrBefore(offsets, items.length, scrollTop + viewportHeight + OVERSCAN_PX);
  }
  const rows: ReactNode[] = [];
  for (let i = first; i <= last; i++) {
    const item = items[i]!;
    const key = getKey(item);
    rows.push(
      <div key={key} data-key={key} ref={measureRef} className="vrow" role="listitem" style={{ transform: `translateY(${offsets[i]}px)` }}>
        {renderItem(item)}
      </div>,
    );
  }

  return (
    <div ref={viewport} className="vlist" onScroll={onScroll} role="log" aria-label={label} aria-live="polite" tabIndex={0}>
      <div className="vlist-space" role="list" style={{ height: `${total}px` }}>
        {rows}
      </div>
    </div>
  );
}
