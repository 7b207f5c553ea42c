/** Small React hooks of the TUI: the terminal size, state readable synchronously, a timed arm (Ctrl-C twice). */
import { useStdout } from 'ink';
import { useCallback, useEffect, useRef, useState } from 'react';

export function useTerminalSize(columns?: number, rows?: number): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const get = useCallback(
    () => ({ columns: columns ?? stdout.columns ?? 80, rows: rows ?? stdout.rows ?? 24 }),
    [stdout, columns, rows],
  );
  const [size, setSize] = useState(get);
  useEffect(() => {
    const onResize = () => setSize(get());
    onResize();
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout, get]);
  return size;
}

export type SetState<T> = (next: T | ((prev: T) => T)) => void;

/**
 * State whose latest value is readable synchronously through the ref: key events can
 * arrive several per chunk, before React re-renders, and must each see the previous one.
 */
export function useSyncState<T>(initial: T | (() => T)): [T, SetState<T>, { readonly current: T }] {
  const [value, setValue] = useState(initial);
  const ref = useRef(value);
  const set = useCallback((next: T | ((prev: T) => T)) => {
    const v = typeof next === 'function' ? (next as (prev: T) => T)(ref.current) : next;
    ref.current = v;
    setValue(v);
  }, []);
  return [value, set, ref];
}

/** A flag that stays armed for `windowMs` after `arm()` (the first Ctrl-C). */
export interface Arm {
  armed: boolean;
  isArmed(): boolean;
  arm(): void;
  disarm(): void;
}

export function useArm(windowMs: number): Arm {
  const [armed, setArmed, ref] = useSyncState(false);
  const timer = useRef<NodeJS.Timeout | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  return {
    armed,
    isArmed: () => ref.current,
    arm: () => {
      setArmed(true);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => setArmed(false), windowMs);
    },
    disarm: () => {
      if (ref.current) setArmed(false);
    },
  };
}
