/**
 * Scrolling the transcript viewport: `scrollTop` is the first visible row, null while
 * following the bottom. Older history merged in front keeps the same rows in view, and
 * paging up to the top asks for the next older page.
 */
import { useEffect, useRef, useState } from 'react';
import { useSyncState } from './hooks.js';
import { visibleTop } from './transcript-view.js';

export interface Scroll {
  scrollTop: number | null;
  /** Whether the view is scrolled away from the bottom (latest value). */
  scrolled(): boolean;
  pageUp(): void;
  pageDown(): void;
  /** Follow the bottom again. */
  follow(): void;
}

/**
 * `total` rows in a viewport of `height`; `prepends` counts merges of older history in
 * front; `onTop` runs when paging reaches the first row.
 */
export function useScroll(total: number, height: number, prepends: number, onTop: () => void): Scroll {
  const [scrollTop, setScrollTop, scrollRef] = useSyncState<number | null>(null);
  const [seenPrepends, setSeenPrepends] = useState(prepends);
  const lastTotal = useRef(total);
  if (seenPrepends !== prepends) {
    // Older history was merged in front: keep the same rows in view.
    const delta = total - lastTotal.current;
    setSeenPrepends(prepends);
    if (scrollTop !== null) setScrollTop(Math.max(0, scrollTop + delta));
  }
  useEffect(() => {
    lastTotal.current = total;
  });

  const page = Math.max(1, height - 2);
  return {
    scrollTop,
    scrolled: () => scrollRef.current !== null,
    pageUp: () => {
      const top = visibleTop(total, height, scrollRef.current);
      const next = Math.max(0, top - page);
      if (total > height) setScrollTop(next);
      if (next === 0) onTop();
    },
    pageDown: () => {
      const current = scrollRef.current;
      if (current === null) return;
      const maxTop = Math.max(0, total - height);
      const next = current + page;
      setScrollTop(next >= maxTop ? null : next);
    },
    follow: () => setScrollTop(null),
  };
}
